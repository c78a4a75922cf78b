package runtime

import (
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// TestSetDefaults: the zero Options resolve, once, to the defaults their
// comments state, and a field set by the host is kept.
func TestSetDefaults(t *testing.T) {
	var o Options
	o.setDefaults()
	want := RestartPolicy{Initial: 200 * time.Millisecond, Max: 30 * time.Second, Jitter: 0.2, ResetAfter: 60 * time.Second}
	if o.StopGrace != 2*time.Second || o.LoginTimeout != 5*time.Minute || o.Restart != want ||
		o.ClientName != "mcpvisor" || o.ClientVersion == "" || o.Logger == nil || o.OpenURL == nil {
		t.Fatalf("zero Options resolved to %+v", o)
	}
	set := Options{StopGrace: time.Second, LoginTimeout: time.Minute, Restart: RestartPolicy{Initial: time.Second}, ClientVersion: "9"}
	set.setDefaults()
	want.Initial = time.Second
	if set.StopGrace != time.Second || set.LoginTimeout != time.Minute || set.Restart != want || set.ClientVersion != "9" {
		t.Fatalf("Options set by the host resolved to %+v", set)
	}
}

// TestModuleVersion: the version named to servers comes from the build
// info: the main module's, else the mcpvisor dependency's (through its
// replace), else "devel" with the revision of a build of mcpvisor itself.
func TestModuleVersion(t *testing.T) {
	main := func(path, version string, settings ...debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: path, Version: version}, Settings: settings}
	}
	rev := debug.BuildSetting{Key: "vcs.revision", Value: "0123456789abcdef0123"}
	dirty := debug.BuildSetting{Key: "vcs.modified", Value: "true"}
	clean := debug.BuildSetting{Key: "vcs.modified", Value: "false"}
	host := main("example.com/host", "v1.2.3", rev)
	host.Deps = []*debug.Module{{Path: "golang.org/x/sys", Version: "v0.1.0"}, {Path: modulePath, Version: "v0.4.1"}}
	replaced := main("example.com/host", "v1.2.3")
	replaced.Deps = []*debug.Module{{Path: modulePath, Version: "v0.4.1", Replace: &debug.Module{Path: "example.com/fork", Version: "v0.4.2"}}}
	local := main("example.com/host", "(devel)", rev)
	local.Deps = []*debug.Module{{Path: modulePath, Version: "v0.4.1", Replace: &debug.Module{Path: "../mcpvisor"}}}
	for name, tt := range map[string]struct {
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		"tagged build":         {main(modulePath, "v0.4.1"), true, "v0.4.1"},
		"stamped checkout":     {main(modulePath, "v0.4.2-0.20261201130000-0123456789ab+dirty", rev, dirty), true, "v0.4.2-0.20261201130000-0123456789ab+dirty"},
		"unstamped, revision":  {main(modulePath, "(devel)", rev, clean), true, "devel+0123456789ab"},
		"unstamped, modified":  {main(modulePath, "(devel)", dirty, rev), true, "devel+0123456789ab.dirty"},
		"unstamped, no VCS":    {main(modulePath, "(devel)"), true, "devel"},
		"a host's dependency":  {host, true, "v0.4.1"},
		"replaced by a module": {replaced, true, "v0.4.2"},
		"replaced by a dir":    {local, true, "devel"},
		"no build info":        {nil, false, "devel"},
	} {
		if got := moduleVersion(tt.info, tt.ok); got != tt.want {
			t.Errorf("%s: %q, want %q", name, got, tt.want)
		}
	}
	// This test binary: mcpvisor is its main module, unstamped.
	if got := moduleVersion(debug.ReadBuildInfo()); !strings.HasPrefix(got, "devel") {
		t.Errorf("in a test binary: %q, want devel...", got)
	}
}

// KeepAlive: zero is the default 30s; negative is off (no interval for the
// layers below); a value of its own is kept.
func TestKeepAliveDefaults(t *testing.T) {
	for _, c := range []struct{ set, want time.Duration }{{0, 30 * time.Second}, {-1, 0}, {-time.Hour, 0}, {time.Second, time.Second}} {
		o := Options{KeepAlive: c.set}
		o.setDefaults()
		if got := o.keepAlive(); got != c.want {
			t.Errorf("KeepAlive %v: interval %v, want %v", c.set, got, c.want)
		}
	}
}
