package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// mk returns a tool of server registered as name; the description names
// the server so that a test can tell two same-named tools apart.
func mk(server, name string) Tool {
	return NewTool(name, server, strings.TrimPrefix(name, server+"__"), "from "+server, json.RawMessage(`{"type":"object"}`), nil)
}

// mkAll returns one tool per name, all of server.
func mkAll(server string, names ...string) []Tool {
	out := make([]Tool, len(names))
	for i, n := range names {
		out[i] = mk(server, n)
	}
	return out
}

func namesOf(ts []Tool) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}

// idsOf identifies each tool by name and providing server.
func idsOf(ts []Tool) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name + "@" + t.Server + "(" + t.Description + ")"
	}
	return out
}

func mustSet(t *testing.T, r *Registry, server string, ts []Tool) {
	t.Helper()
	if err := r.SetServer(server, ts); err != nil {
		t.Fatalf("SetServer(%q): %v", server, err)
	}
}

// pending reports whether C holds a signal, without waiting.
func pending(s *Subscription) bool {
	select {
	case <-s.C:
		return true
	default:
		return false
	}
}

// inTime runs f and fails the test if it has not returned within 10s, so a
// writer that blocks on a subscriber fails instead of hanging the run.
func inTime(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not return in 10s: a writer blocks", what)
	}
}

func TestListSortedAndStable(t *testing.T) {
	servers := map[string][]Tool{
		"zeta":  mkAll("zeta", "zeta__b", "zeta__a"),
		"alpha": mkAll("alpha", "alpha__z", "alpha__m", "alpha__a"),
		"mid":   mkAll("mid", "mid__only"),
	}
	want := []string{"alpha__a", "alpha__m", "alpha__z", "mid__only", "zeta__a", "zeta__b"}
	orders := [][]string{
		{"alpha", "mid", "zeta"},
		{"zeta", "mid", "alpha"},
		{"mid", "zeta", "alpha"},
	}
	for _, order := range orders {
		t.Run(strings.Join(order, ","), func(t *testing.T) {
			r := NewRegistry(nil)
			for _, s := range order {
				mustSet(t, r, s, servers[s])
			}
			for range 3 { // repeated reads give the same answer
				if got := namesOf(r.List()); !slices.Equal(got, want) {
					t.Fatalf("List = %v, want %v", got, want)
				}
			}
		})
	}
}

func TestListEmptyRegistry(t *testing.T) {
	r := NewRegistry(nil)
	if got := r.List(); len(got) != 0 {
		t.Errorf("List on a new registry = %v, want empty", namesOf(got))
	}
	if _, ok := r.Get("anything"); ok {
		t.Error("Get on a new registry found a tool")
	}
}

func TestGet(t *testing.T) {
	r := NewRegistry(nil)
	mustSet(t, r, "docs", mkAll("docs", "docs__search", "docs__fetch"))
	mustSet(t, r, "git", mkAll("git", "git__log"))
	cases := []struct {
		name       string
		wantOK     bool
		wantServer string
	}{
		{"docs__search", true, "docs"},
		{"docs__fetch", true, "docs"},
		{"git__log", true, "git"},
		{"search", false, ""}, // the original name is not a registry name
		{"git__push", false, ""},
		{"", false, ""},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%q", tc.name), func(t *testing.T) {
			got, ok := r.Get(tc.name)
			if ok != tc.wantOK {
				t.Fatalf("Get(%q) ok = %v, want %v", tc.name, ok, tc.wantOK)
			}
			if !ok {
				return
			}
			if got.Name != tc.name || got.Server != tc.wantServer || got.OriginalName != strings.TrimPrefix(tc.name, tc.wantServer+"__") {
				t.Errorf("Get(%q) = %+v", tc.name, got)
			}
		})
	}
}

func TestListAndServerToolsReturnCopies(t *testing.T) {
	r := NewRegistry(nil)
	in := mkAll("s", "s__a", "s__b")
	mustSet(t, r, "s", in)

	in[0].Name = "s__mutated_input" // the caller's slice is not kept

	l := r.List()
	l[0].Name = "s__mutated_list"
	st := r.ServerTools("s")
	st[1].Name = "s__mutated_server_tools"

	if got, want := namesOf(r.List()), []string{"s__a", "s__b"}; !slices.Equal(got, want) {
		t.Errorf("List after mutating returned slices = %v, want %v", got, want)
	}
	if got, want := namesOf(r.ServerTools("s")), []string{"s__a", "s__b"}; !slices.Equal(got, want) {
		t.Errorf("ServerTools after mutating returned slices = %v, want %v", got, want)
	}
}

func TestSetServerReplacesWholeList(t *testing.T) {
	r := NewRegistry(nil)
	mustSet(t, r, "s", mkAll("s", "s__a", "s__b", "s__c"))
	mustSet(t, r, "other", mkAll("other", "other__x"))
	mustSet(t, r, "s", mkAll("s", "s__c", "s__d"))

	if got, want := namesOf(r.List()), []string{"other__x", "s__c", "s__d"}; !slices.Equal(got, want) {
		t.Errorf("List = %v, want %v", got, want)
	}
	for _, gone := range []string{"s__a", "s__b"} {
		if _, ok := r.Get(gone); ok {
			t.Errorf("Get(%q) still finds a tool the server no longer has", gone)
		}
	}
}

func TestEmptyListRemovesServer(t *testing.T) {
	cases := []struct {
		name   string
		remove func(r *Registry) error
	}{
		{"SetServer nil", func(r *Registry) error { return r.SetServer("s", nil) }},
		{"SetServer empty slice", func(r *Registry) error { return r.SetServer("s", []Tool{}) }},
		{"RemoveServer", func(r *Registry) error { r.RemoveServer("s"); return nil }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRegistry(nil)
			mustSet(t, r, "s", mkAll("s", "s__a", "s__b"))
			mustSet(t, r, "keep", mkAll("keep", "keep__a"))
			if err := tc.remove(r); err != nil {
				t.Fatalf("removing: %v", err)
			}
			if got, want := namesOf(r.List()), []string{"keep__a"}; !slices.Equal(got, want) {
				t.Errorf("List = %v, want %v", got, want)
			}
			if got := r.ServerTools("s"); len(got) != 0 {
				t.Errorf("ServerTools(removed) = %v, want empty", namesOf(got))
			}
			if _, ok := r.Get("s__a"); ok {
				t.Error("Get finds a tool of a removed server")
			}
		})
	}
}

// A reader never sees a mix of a server's old and new lists. The two lists
// overlap in names but differ in description, so a mix at the level of a
// single tool would show too.
func TestSetServerIsAtomicForReaders(t *testing.T) {
	var aNames, bNames []string
	for i := range 10 {
		aNames = append(aNames, fmt.Sprintf("s__t%02d", i))
		bNames = append(bNames, fmt.Sprintf("s__t%02d", i+5))
	}
	listA, listB := mkAll("s", aNames...), mkAll("s", bNames...)
	for i := range listB {
		listB[i].Description = "list B"
	}
	wantA, wantB := idsOf(listA), idsOf(listB) // already sorted by name

	r := NewRegistry(nil)
	mustSet(t, r, "s", listA)

	var (
		stop         = make(chan struct{})
		sawA, sawB   atomic.Bool
		reads, mixes atomic.Int64
		firstMix     atomic.Pointer[string]
		wg           sync.WaitGroup
	)
	for range 4 {
		wg.Go(func() {
			var lastVersion uint64
			for {
				v := r.Version()
				got := idsOf(r.List())
				reads.Add(1)
				switch {
				case slices.Equal(got, wantA):
					sawA.Store(true)
				case slices.Equal(got, wantB):
					sawB.Store(true)
				default:
					mixes.Add(1)
					s := strings.Join(got, " ")
					firstMix.CompareAndSwap(nil, &s)
				}
				if v < lastVersion {
					mixes.Add(1)
					s := fmt.Sprintf("version went back from %d to %d", lastVersion, v)
					firstMix.CompareAndSwap(nil, &s)
				}
				lastVersion = v
				select {
				case <-stop:
					return
				default:
				}
			}
		})
	}

	// Swap at least 2000 times, and until the readers saw both lists.
	deadline := time.Now().Add(10 * time.Second)
	swaps := 0
	for ; swaps < 2000 || !sawA.Load() || !sawB.Load(); swaps++ {
		if time.Now().After(deadline) {
			t.Errorf("after %d swaps in 10s the readers saw list A: %v, list B: %v", swaps, sawA.Load(), sawB.Load())
			break
		}
		next := listB
		if swaps%2 == 1 {
			next = listA
		}
		if err := r.SetServer("s", next); err != nil {
			t.Fatalf("SetServer: %v", err)
		}
	}
	close(stop)
	wg.Wait()

	if n := mixes.Load(); n > 0 {
		t.Fatalf("%d of %d reads saw neither list exactly; first: %s", n, reads.Load(), *firstMix.Load())
	}
	t.Logf("%d swaps, %d reads, all consistent", swaps, reads.Load())
}

// Registration order decides collisions: the last registered wins, and a
// shadowed tool comes back when the winner goes away.
func TestCollisionLastRegisteredWins(t *testing.T) {
	type step struct {
		op     string // "set" or "remove"
		server string
		names  []string // for set
		want   string   // server expected to own "dup" after the step; "" for none
	}
	set := func(server string, want string, names ...string) step {
		if names == nil {
			names = []string{"dup"}
		}
		return step{op: "set", server: server, names: names, want: want}
	}
	remove := func(server, want string) step { return step{op: "remove", server: server, want: want} }

	cases := []struct {
		name  string
		steps []step
	}{
		{"second shadows first", []step{set("A", "A"), set("B", "B")}},
		{"removing the winner brings the shadowed back", []step{set("A", "A"), set("B", "B"), remove("B", "A")}},
		{"winner's new list without the name", []step{set("A", "A"), set("B", "B"), set("B", "A", "B__other")}},
		{"winner set to an empty list", []step{set("A", "A"), set("B", "B"), {op: "set", server: "B", names: []string{}, want: "A"}}},
		{"removing the shadowed keeps the winner", []step{set("A", "A"), set("B", "B"), remove("A", "B"), remove("B", "")}},
		{"three servers unwind newest first", []step{set("A", "A"), set("B", "B"), set("C", "C"), remove("C", "B"), remove("B", "A"), remove("A", "")}},
		{"middle one removed", []step{set("A", "A"), set("B", "B"), set("C", "C"), remove("B", "C"), remove("C", "A")}},
		{"re-registering the shadowed makes it win", []step{set("A", "A"), set("B", "B"), set("A", "A"), remove("A", "B")}},
		{"winner refreshing stays newest", []step{set("A", "A"), set("B", "B"), set("B", "B", "dup", "B__x"), remove("B", "A")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRegistry(nil)
			for i, st := range tc.steps {
				switch st.op {
				case "set":
					mustSet(t, r, st.server, mkAll(st.server, st.names...))
				case "remove":
					r.RemoveServer(st.server)
				}
				got, ok := r.Get("dup")
				switch {
				case st.want == "" && ok:
					t.Fatalf("step %d (%s %s): Get(dup) from %q, want none", i, st.op, st.server, got.Server)
				case st.want != "" && (!ok || got.Server != st.want || got.Description != "from "+st.want):
					t.Fatalf("step %d (%s %s): Get(dup) = %+v (found %v), want the one of %q", i, st.op, st.server, got, ok, st.want)
				}
				// List agrees with Get and holds the name at most once.
				var inList []Tool
				for _, tl := range r.List() {
					if tl.Name == "dup" {
						inList = append(inList, tl)
					}
				}
				if st.want == "" && len(inList) != 0 || st.want != "" && (len(inList) != 1 || inList[0].Server != st.want) {
					t.Fatalf("step %d (%s %s): List has dup as %v, want once from %q", i, st.op, st.server, idsOf(inList), st.want)
				}
			}
		})
	}
}

// syncBuffer is a bytes.Buffer safe for a logger's concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// take returns the records written since the last take.
func (b *syncBuffer) take(t *testing.T) []map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for line := range strings.Lines(b.buf.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, rec)
	}
	b.buf.Reset()
	return out
}

func TestCollisionLoggedOncePerSetServer(t *testing.T) {
	type collision struct{ tool, kept, shadowed string }
	steps := []struct {
		desc   string
		do     func(r *Registry) error
		logged []collision
	}{
		{"A registers", func(r *Registry) error { return r.SetServer("A", mkAll("A", "dup", "A__own")) }, nil},
		{"B collides with A", func(r *Registry) error { return r.SetServer("B", mkAll("B", "dup", "B__own")) },
			[]collision{{"dup", "B", "A"}}},
		{"B refreshes, still the winner", func(r *Registry) error { return r.SetServer("B", mkAll("B", "dup", "B__own", "B__new")) }, nil},
		{"C without collision", func(r *Registry) error { return r.SetServer("C", mkAll("C", "C__own")) }, nil},
		{"A re-registers and takes dup back", func(r *Registry) error { return r.SetServer("A", mkAll("A", "dup")) },
			[]collision{{"dup", "A", "B"}}},
		{"A removed, B's dup comes back silently", func(r *Registry) error { r.RemoveServer("A"); return nil }, nil},
		{"C collides on two names", func(r *Registry) error { return r.SetServer("C", mkAll("C", "dup", "B__own")) },
			[]collision{{"dup", "C", "B"}, {"B__own", "C", "B"}}},
		{"C removed", func(r *Registry) error { return r.SetServer("C", nil) }, nil},
		// Sanitising can give two of a server's tools one registry name.
		{"D holds dup twice", func(r *Registry) error { return r.SetServer("D", mkAll("D", "dup", "D__x", "dup")) },
			[]collision{{"dup", "D", "B"}}},
	}

	buf := &syncBuffer{}
	r := NewRegistry(slog.New(slog.NewJSONHandler(buf, nil)))
	for _, st := range steps {
		if err := st.do(r); err != nil {
			t.Fatalf("%s: %v", st.desc, err)
		}
		var got []collision
		for _, rec := range buf.take(t) {
			if rec["level"] != "WARN" || !strings.Contains(rec["msg"].(string), "collision") {
				t.Errorf("%s: unexpected log record %v", st.desc, rec)
				continue
			}
			got = append(got, collision{fmt.Sprint(rec["tool"]), fmt.Sprint(rec["kept"]), fmt.Sprint(rec["shadowed"])})
		}
		slices.SortFunc(got, func(a, b collision) int { return strings.Compare(a.tool, b.tool) })
		want := slices.Clone(st.logged)
		slices.SortFunc(want, func(a, b collision) int { return strings.Compare(a.tool, b.tool) })
		if !slices.Equal(got, want) {
			t.Errorf("%s: logged %+v, want %+v", st.desc, got, want)
		}
	}
}

func TestNilLoggerDiscards(t *testing.T) {
	r := NewRegistry(nil)
	mustSet(t, r, "A", mkAll("A", "dup"))
	mustSet(t, r, "B", mkAll("B", "dup")) // logs the collision; must not panic
	if got, _ := r.Get("dup"); got.Server != "B" {
		t.Errorf("Get(dup).Server = %q, want B", got.Server)
	}
}

func TestClose(t *testing.T) {
	cases := []struct {
		name        string
		servers     []string
		wantSignal  bool // Close itself changes the tool set
		wantVersion bool
	}{
		{"with servers", []string{"A", "B"}, true, true},
		{"empty registry", nil, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRegistry(nil)
			for _, s := range tc.servers {
				mustSet(t, r, s, mkAll(s, s+"__a", "dup"))
			}
			sub := r.Subscribe()
			defer sub.Close()
			before := r.Version()

			r.Close()

			if got := pending(sub); got != tc.wantSignal {
				t.Errorf("signal after Close = %v, want %v", got, tc.wantSignal)
			}
			if got := r.Version() > before; got != tc.wantVersion {
				t.Errorf("version %d -> %d, want increased = %v", before, r.Version(), tc.wantVersion)
			}
			if got := r.List(); len(got) != 0 {
				t.Errorf("List after Close = %v, want empty", namesOf(got))
			}
			for _, s := range tc.servers {
				if got := r.ServerTools(s); len(got) != 0 {
					t.Errorf("ServerTools(%q) after Close = %v", s, namesOf(got))
				}
				if _, ok := r.Get(s + "__a"); ok {
					t.Errorf("Get(%s__a) after Close found a tool", s)
				}
			}

			after := r.Version()
			for _, ts := range [][]Tool{mkAll("C", "C__a"), nil} {
				if err := r.SetServer("C", ts); !errors.Is(err, ErrRegistryClosed) {
					t.Errorf("SetServer(%d tools) after Close = %v, want ErrRegistryClosed", len(ts), err)
				}
			}
			r.RemoveServer("A")
			r.Close() // a second Close is harmless
			if len(r.List()) != 0 || r.Version() != after || pending(sub) {
				t.Errorf("operations after Close changed something: List %v, version %d -> %d", namesOf(r.List()), after, r.Version())
			}
		})
	}
}

func TestVersion(t *testing.T) {
	steps := []struct {
		desc     string
		do       func(r *Registry)
		increase bool
	}{
		{"set A", func(r *Registry) { _ = r.SetServer("A", mkAll("A", "A__x")) }, true},
		{"set B", func(r *Registry) { _ = r.SetServer("B", mkAll("B", "B__x")) }, true},
		{"replace A", func(r *Registry) { _ = r.SetServer("A", mkAll("A", "A__y")) }, true},
		{"remove unknown", func(r *Registry) { r.RemoveServer("nobody") }, false},
		{"empty list for unknown", func(r *Registry) { _ = r.SetServer("nobody", nil) }, false},
		{"empty list for A", func(r *Registry) { _ = r.SetServer("A", nil) }, true},
		{"remove B", func(r *Registry) { r.RemoveServer("B") }, true},
		{"remove B again", func(r *Registry) { r.RemoveServer("B") }, false},
		{"set C", func(r *Registry) { _ = r.SetServer("C", mkAll("C", "C__x")) }, true},
		{"close", func(r *Registry) { r.Close() }, true},
		{"set after close", func(r *Registry) { _ = r.SetServer("D", mkAll("D", "D__x")) }, false},
	}
	r := NewRegistry(nil)
	prev := r.Version()
	for _, st := range steps {
		st.do(r)
		v := r.Version()
		switch {
		case st.increase && v <= prev:
			t.Errorf("%s: version %d -> %d, want an increase", st.desc, prev, v)
		case !st.increase && v != prev:
			t.Errorf("%s: version %d -> %d, want unchanged", st.desc, prev, v)
		}
		prev = v
	}
}

func TestServerTools(t *testing.T) {
	r := NewRegistry(nil)
	mustSet(t, r, "A", mkAll("A", "A__z", "dup", "A__a"))
	mustSet(t, r, "B", mkAll("B", "dup", "B__m"))

	cases := []struct {
		server string
		want   []string
	}{
		{"A", []string{"A__z@A(from A)", "dup@A(from A)", "A__a@A(from A)"}}, // server's order; dup is shadowed by B but listed
		{"B", []string{"dup@B(from B)", "B__m@B(from B)"}},
		{"nobody", nil},
	}
	for _, tc := range cases {
		t.Run(tc.server, func(t *testing.T) {
			if got := idsOf(r.ServerTools(tc.server)); !slices.Equal(got, tc.want) {
				t.Errorf("ServerTools(%q) = %v, want %v", tc.server, got, tc.want)
			}
		})
	}
	if got, _ := r.Get("dup"); got.Server != "B" {
		t.Errorf("Get(dup).Server = %q, want B (A's dup is only shadowed)", got.Server)
	}
}

func TestSubscribeSignalsAfterEveryChange(t *testing.T) {
	steps := []struct {
		desc   string
		do     func(r *Registry)
		signal bool
	}{
		{"set A", func(r *Registry) { _ = r.SetServer("A", mkAll("A", "A__x")) }, true},
		{"replace A", func(r *Registry) { _ = r.SetServer("A", mkAll("A", "A__y")) }, true},
		{"set B", func(r *Registry) { _ = r.SetServer("B", mkAll("B", "B__x")) }, true},
		{"remove unknown", func(r *Registry) { r.RemoveServer("nobody") }, false},
		{"empty list for unknown", func(r *Registry) { _ = r.SetServer("nobody", nil) }, false},
		{"remove A", func(r *Registry) { r.RemoveServer("A") }, true},
		{"empty list for B", func(r *Registry) { _ = r.SetServer("B", []Tool{}) }, true},
		{"close empty registry", func(r *Registry) { r.Close() }, false},
		{"set after close", func(r *Registry) { _ = r.SetServer("C", mkAll("C", "C__x")) }, false},
	}
	r := NewRegistry(nil)
	// Subscriptions here are closed at the end rather than deferred: after
	// an inTime failure the stuck writer holds the registry's lock.
	sub := r.Subscribe()
	if pending(sub) {
		t.Fatal("a new subscription has a signal before any change")
	}
	for _, st := range steps {
		inTime(t, st.desc, func() { st.do(r) }) // notification is synchronous
		if got := pending(sub); got != st.signal {
			t.Errorf("%s: signal = %v, want %v", st.desc, got, st.signal)
		}
	}
	sub.Close()
}

func TestSubscribeCoalesces(t *testing.T) {
	r := NewRegistry(nil)
	sub := r.Subscribe()
	inTime(t, "100 changes", func() {
		for i := range 100 {
			_ = r.SetServer("s", mkAll("s", fmt.Sprintf("s__t%d", i)))
		}
	})
	if !pending(sub) {
		t.Fatal("no signal after 100 changes")
	}
	if pending(sub) {
		t.Fatal("a second signal was pending: changes were not coalesced")
	}
	// The coalesced signal is about the current set.
	if got, want := namesOf(r.List()), []string{"s__t99"}; !slices.Equal(got, want) {
		t.Errorf("List after signal = %v, want %v", got, want)
	}
	mustSet(t, r, "s", mkAll("s", "s__again"))
	if !pending(sub) {
		t.Error("no signal for a change after the pending one was taken")
	}
	sub.Close()
}

func TestSubscribeNeverBlocksWriter(t *testing.T) {
	r := NewRegistry(nil)
	subs := make([]*Subscription, 10) // nobody ever reads these
	for i := range subs {
		subs[i] = r.Subscribe()
	}
	inTime(t, "10000 changes with unread subscriptions", func() {
		for i := range 10_000 {
			if err := r.SetServer("s", mkAll("s", fmt.Sprintf("s__t%d", i%7))); err != nil {
				t.Errorf("SetServer: %v", err)
				return
			}
		}
	})
	for i, s := range subs {
		if !pending(s) || pending(s) {
			t.Errorf("subscription %d: want exactly one pending signal", i)
		}
		s.Close()
	}
}

func TestSubscriptionCloseStopsSignals(t *testing.T) {
	r := NewRegistry(nil)
	closed, open := r.Subscribe(), r.Subscribe()

	closed.Close()
	closed.Close() // twice is harmless
	inTime(t, "two changes", func() {
		_ = r.SetServer("s", mkAll("s", "s__a"))
		r.RemoveServer("s")
	})

	if pending(closed) {
		t.Error("a closed subscription got a signal (or its C was closed)")
	}
	if !pending(open) {
		t.Error("closing one subscription silenced another")
	}
	open.Close()
}

// Subscribing, closing and reading while writers change the set is safe
// under -race, and every subscriber still open at a change gets a signal.
func TestConcurrentUse(t *testing.T) {
	r := NewRegistry(nil)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 3 {
		server := fmt.Sprintf("w%d", w)
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if i%3 == 2 {
					r.RemoveServer(server)
				} else if err := r.SetServer(server, mkAll(server, server+"__a", "dup")); err != nil {
					t.Errorf("SetServer: %v", err)
					return
				}
			}
		})
	}
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				s := r.Subscribe()
				_ = r.List()
				_, _ = r.Get("dup")
				_ = r.ServerTools("w0")
				s.Close()
			}
		})
	}
	// Let writers and readers overlap for twenty signalled changes.
	sub := r.Subscribe()
	for i := range 20 {
		select {
		case <-sub.C:
		case <-time.After(10 * time.Second):
			t.Fatalf("no signal %d in 10s while writers were changing the set", i+1)
		}
	}
	inTime(t, "stopping the workers", func() {
		sub.Close()
		close(stop)
		wg.Wait()
	})

	for _, tl := range r.List() {
		if tl.Name != "dup" && tl.Name != tl.Server+"__a" {
			t.Errorf("unexpected tool %+v", tl)
		}
	}
}

// Reads cost no allocation beyond List's copy.
func TestReadAllocations(t *testing.T) {
	r := NewRegistry(nil)
	mustSet(t, r, "s", mkAll("s", "s__a", "s__b", "s__c"))
	if n := testing.AllocsPerRun(100, func() { _, _ = r.Get("s__b") }); n != 0 {
		t.Errorf("Get allocates %v times, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { _ = r.List() }); n != 1 {
		t.Errorf("List allocates %v times, want 1 (the copy)", n)
	}
	if n := testing.AllocsPerRun(100, func() { _ = r.Version() }); n != 0 {
		t.Errorf("Version allocates %v times, want 0", n)
	}
}
