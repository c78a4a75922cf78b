package actors

import (
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/testutil"
)

const planted = "SECRET-PANICMARK-77"

func depsWithSecret(logs *testutil.Buffer) *Deps {
	f := &config.File{}
	f.Put(config.Server{Name: "fs", Type: config.TypeLocal, Command: []string{"x"}, Env: map[string]string{"TOKEN": planted}})
	var cfg atomic.Pointer[config.File]
	cfg.Store(f)
	return &Deps{Config: &cfg, Events: events.NewBus(nil),
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))}
}

// A panic's value is scrubbed of its server's secrets and cut to a bound
// on a UTF-8 boundary.
func TestPanicValueScrubbedAndCutOnARune(t *testing.T) {
	d := depsWithSecret(&testutil.Buffer{})
	v := panicValue("token "+planted+" "+strings.Repeat("é", 2*panicValueLimit), d.scrubberOf("fs"))
	if strings.Contains(v, planted) {
		t.Errorf("the panic value shows the server's secret: %.80s", v)
	}
	if !utf8.ValidString(v) || len(v) > panicValueLimit+len(" …") {
		t.Errorf("panic value of %d bytes, valid UTF-8 %v", len(v), utf8.ValidString(v))
	}
}

// A panic is reported as an ActorPanicked event of its server, and its
// stack goes to the log at Error.
func TestReportPanicsLogsTheStackAtError(t *testing.T) {
	logs := &testutil.Buffer{}
	d := depsWithSecret(logs)
	sub := d.Events.Subscribe(events.SubscribeOptions{})
	defer sub.Close()
	system := actor.NewActorSystem()
	defer system.Shutdown()
	pid, err := system.Root.SpawnNamed(Props(d, func() actor.Actor {
		return actor.ReceiveFunc(func(c actor.Context) {
			if s, ok := c.Message().(string); ok {
				panic(s)
			}
		})
	}), "manager/fs")
	if err != nil {
		t.Fatal(err)
	}
	system.Root.Send(pid, "boom "+planted)
	e := testutil.Await[events.ActorPanicked](t, sub, 5*time.Second, "the panic", nil)
	if e.Server != "fs" || strings.Contains(e.Value, planted) || !strings.Contains(e.Value, "boom") {
		t.Errorf("panic event %s", e)
	}
	if out := logs.String(); !strings.Contains(out, "level=ERROR msg=\"actor panic stack\"") {
		t.Errorf("no stack at Error in the log:\n%s", out)
	}
}
