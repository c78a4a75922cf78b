package status

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func names(ss []Server) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Name
	}
	return out
}

func TestSetGet(t *testing.T) {
	since := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	full := Server{
		Name: "docs", State: Failed, Error: "exit status 1", ErrorKind: KindConnectFailed,
		ToolCount: 0, Restarts: 3, Since: since, PID: 4242, StderrTail: []string{"set at Set"},
	}
	cases := []struct {
		name string
		sets []Server
		tail func() []string
		get  string
		want Server
		ok   bool
	}{
		{"unknown on an empty board", nil, nil, "docs", Server{}, false},
		{"every field comes back", []Server{full}, nil, "docs", full, true},
		{"unknown among others", []Server{full}, nil, "git", Server{}, false},
		{"a later Set replaces", []Server{full, {Name: "docs", State: Ready, Ready: true, ToolCount: 5}}, nil, "docs",
			Server{Name: "docs", State: Ready, Ready: true, ToolCount: 5}, true},
		{"tail replaces the StderrTail given to Set", []Server{full}, func() []string { return []string{"from tail"} }, "docs",
			func() Server { s := full; s.StderrTail = []string{"from tail"}; return s }(), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBoard()
			for _, s := range tc.sets {
				b.Set(s, tc.tail)
			}
			got, ok := b.Get(tc.get)
			if ok != tc.ok || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Get(%q) = %+v, %v; want %+v, %v", tc.get, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestListOrder(t *testing.T) {
	type op struct {
		kind  string // "set", "delete", "order"
		names []string
	}
	set := func(n ...string) op { return op{"set", n} }
	del := func(n ...string) op { return op{"delete", n} }
	order := func(n ...string) op { return op{"order", n} }

	cases := []struct {
		name string
		ops  []op
		want []string
	}{
		{"empty board", nil, []string{}},
		{"first-seen order without a config order", []op{set("c", "a", "b")}, []string{"c", "a", "b"}},
		{"a second Set does not move a server", []op{set("c", "a", "b", "c", "a")}, []string{"c", "a", "b"}},
		{"config order before any Set; unset names are not listed", []op{order("b", "a", "c"), set("c", "x", "a")}, []string{"a", "c", "x"}},
		{"config order after Sets puts others last in first-seen order", []op{set("x", "c", "a", "y"), order("a", "b", "c")}, []string{"a", "c", "x", "y"}},
		{"a config name set late takes its config place", []op{order("a", "b", "c"), set("c", "a", "z"), set("b")}, []string{"a", "b", "c", "z"}},
		{"a second SetOrder replaces the first", []op{order("a", "b"), set("a", "b", "x"), order("b")}, []string{"b", "a", "x"}},
		{"delete removes from the list", []op{set("a", "b", "c"), del("b")}, []string{"a", "c"}},
		{"delete of an unknown name is a no-op", []op{set("a", "b"), del("nobody")}, []string{"a", "b"}},
		{"an unconfigured server set again after Delete is last", []op{set("a", "b", "c"), del("a"), set("a")}, []string{"b", "c", "a"}},
		{"a configured server set again after Delete keeps its config place", []op{order("a", "b", "c"), set("a", "b", "c"), del("b"), set("b")}, []string{"a", "b", "c"}},
		{"delete then SetOrder without it", []op{order("a", "b", "c"), set("a", "b", "c"), del("b"), order("a", "c")}, []string{"a", "c"}},
		{"a name deleted and dropped from the config comes back as a newcomer", []op{order("a", "b", "c"), set("a", "b", "c"), del("b"), order("a", "c"), set("x", "b")}, []string{"a", "c", "x", "b"}},
		{"a name dropped from the config stays, after the config names", []op{order("a", "b", "c"), set("c", "b", "a"), order("c", "a")}, []string{"c", "a", "b"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBoard()
			for _, o := range tc.ops {
				switch o.kind {
				case "set":
					for _, n := range o.names {
						b.Set(Server{Name: n, State: Starting}, nil)
					}
				case "delete":
					for _, n := range o.names {
						b.Delete(n)
					}
				case "order":
					b.SetOrder(o.names)
				}
			}
			if got := names(b.List()); !slices.Equal(got, tc.want) {
				t.Errorf("List = %v, want %v", got, tc.want)
			}
			for _, n := range tc.want {
				if _, ok := b.Get(n); !ok {
					t.Errorf("Get(%q) = false for a listed server", n)
				}
			}
		})
	}
}

func TestDeleteForgetsTheStatus(t *testing.T) {
	b := NewBoard()
	b.Set(Server{Name: "a", State: Failed, Error: "old error", Restarts: 7}, func() []string { return []string{"old line"} })
	b.Delete("a")
	if _, ok := b.Get("a"); ok {
		t.Fatal("Get finds a deleted server")
	}
	b.Set(Server{Name: "a", State: Starting}, nil)
	got, _ := b.Get("a")
	if want := (Server{Name: "a", State: Starting}); !reflect.DeepEqual(got, want) {
		t.Errorf("Get after Delete and Set = %+v, want %+v (nothing of the old entry)", got, want)
	}
}

// SetOrder copies its argument: a caller reusing its slice does not reorder
// the board.
func TestSetOrderCopiesNames(t *testing.T) {
	b := NewBoard()
	cfg := []string{"a", "b"}
	b.SetOrder(cfg)
	b.Set(Server{Name: "a"}, nil)
	b.Set(Server{Name: "b"}, nil)
	cfg[0], cfg[1] = "b", "a"
	if got, want := names(b.List()), []string{"a", "b"}; !slices.Equal(got, want) {
		t.Errorf("List = %v, want %v", got, want)
	}
}

// tailBuffer stands for a server's stderr ring: it changes without Set.
type tailBuffer struct {
	mu    sync.Mutex
	lines []string
	reads atomic.Int32
}

func (tb *tailBuffer) add(l string) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.lines = append(tb.lines, l)
}

func (tb *tailBuffer) Lines() []string {
	tb.reads.Add(1)
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return slices.Clone(tb.lines)
}

func TestStderrTailIsReadLive(t *testing.T) {
	b := NewBoard()
	tb := &tailBuffer{}
	tb.add("starting")
	b.Set(Server{Name: "s", State: Ready}, tb.Lines)
	b.Set(Server{Name: "quiet", State: Ready}, nil)
	if n := tb.reads.Load(); n != 0 {
		t.Errorf("Set read the tail %d times; it must only be read with the status", n)
	}

	reads := []struct {
		name string
		read func() (Server, bool)
	}{
		{"Get", func() (Server, bool) { return b.Get("s") }},
		{"List", func() (Server, bool) {
			for _, s := range b.List() {
				if s.Name == "s" {
					return s, true
				}
			}
			return Server{}, false
		}},
	}
	for i, line := range []string{"warming up", "listening"} {
		tb.add(line)
		want := []string{"starting", "warming up", "listening"}[:i+2]
		for _, r := range reads {
			got, ok := r.read()
			if !ok || !slices.Equal(got.StderrTail, want) {
				t.Errorf("after line %q, %s StderrTail = %q (found %v), want %q", line, r.name, got.StderrTail, ok, want)
			}
		}
	}
	if q, _ := b.Get("quiet"); q.StderrTail != nil {
		t.Errorf("server without a tail has StderrTail %q", q.StderrTail)
	}
}

// A slow tail (a server actor's buffer behind its own lock) holds up only
// the reader that asked for it, never a writer or another reader.
func TestSlowTailBlocksNobodyElse(t *testing.T) {
	b := NewBoard()
	release := make(chan struct{})
	entered := make(chan struct{})
	var once sync.Once
	var armed atomic.Bool // blocks only once the test is ready to wait on it
	b.Set(Server{Name: "slow"}, func() []string {
		if armed.Load() {
			once.Do(func() { close(entered) })
			<-release
		}
		return []string{"late"}
	})
	b.Set(Server{Name: "other"}, nil)
	armed.Store(true)

	listed := make(chan []Server, 1)
	go func() { listed <- b.List() }()
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatal("List never read the tail")
	}

	done := make(chan struct{})
	go func() {
		defer close(done)
		b.Set(Server{Name: "other", State: Ready}, nil)
		b.SetOrder([]string{"other", "slow"})
		b.Delete("gone")
		if _, ok := b.Get("other"); !ok {
			t.Error("Get(other) = false")
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Error("Set/SetOrder/Delete/Get waited for a slow tail")
	}
	close(release)
	select {
	case got := <-listed:
		if len(got) != 2 || got[0].Name != "slow" || !slices.Equal(got[0].StderrTail, []string{"late"}) {
			t.Errorf("List = %+v", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("List did not return after the tail was released")
	}
	<-done
}

// Concurrent writers and readers under -race: every listed status is one a
// writer published whole, and the configured order holds in every List.
func TestConcurrentSetList(t *testing.T) {
	const servers = 8
	var cfg []string
	for i := range servers {
		cfg = append(cfg, fmt.Sprintf("s%d", i))
	}
	b := NewBoard()
	b.SetOrder(cfg)
	tb := &tailBuffer{}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range servers {
		name := cfg[servers-1-i] // first seen in reverse; config order must still win
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				// ToolCount and Restarts are always written together.
				b.Set(Server{Name: name, State: Ready, ToolCount: n, Restarts: n}, tb.Lines)
				if n%50 == 49 {
					b.Delete(name)
				}
			}
		})
	}
	wg.Go(func() {
		for n := 0; ; n++ {
			select {
			case <-stop:
				return
			default:
			}
			tb.add(fmt.Sprint(n))
			b.Set(Server{Name: "extra"}, nil)
			b.Delete("extra")
		}
	})

	var reads atomic.Int64
	errs := make(chan string, 4)
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				list := b.List()
				reads.Add(1)
				var configured []string
				for _, s := range list {
					if s.ToolCount != s.Restarts {
						errs <- fmt.Sprintf("torn status %+v", s)
						return
					}
					if s.Name != "extra" {
						configured = append(configured, s.Name)
					}
				}
				if !slices.IsSorted(configured) { // s0 < s1 < ... is the config order
					errs <- fmt.Sprintf("List order %v breaks the config order", names(list))
					return
				}
				if s, ok := b.Get("s0"); ok && s.ToolCount != s.Restarts {
					errs <- fmt.Sprintf("torn status from Get %+v", s)
					return
				}
			}
		})
	}
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if reads.Load() == 0 {
		t.Error("the readers never ran")
	}
}

func TestServerJSON(t *testing.T) {
	cases := []struct {
		name string
		s    Server
		want string
	}{
		{
			name: "ready with pid and tail",
			s:    Server{Name: "docs", State: Ready, Ready: true, ToolCount: 2, Since: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), PID: 12, StderrTail: []string{"hi"}},
			want: `{"name":"docs","state":"ready","ready":true,"error":"","error_kind":"","tool_count":2,"prompt_count":0,"restarts":0,"since":"2025-01-02T03:04:05Z","pid":12,"requests_refused":0,"stderr_tail":["hi"]}`,
		},
		{
			name: "failed without pid or tail",
			s:    Server{Name: "git", State: Failed, Error: "not found", ErrorKind: KindCommandNotFound, Restarts: 1},
			want: `{"name":"git","state":"failed","ready":false,"error":"not found","error_kind":"command_not_found","tool_count":0,"prompt_count":0,"restarts":1,"since":"0001-01-01T00:00:00Z","requests_refused":0}`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.Marshal(tc.s)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("Marshal =\n  %s\nwant\n  %s", got, tc.want)
			}
		})
	}
}

// TestBoardCountRefused: refusals are counted apart from the entry its
// writer sets, survive that writer's next Set, and go with Delete.
func TestBoardCountRefused(t *testing.T) {
	b := NewBoard()
	b.CountRefused("a") // not on the board: ignored
	b.Set(Server{Name: "a", State: Starting}, nil)
	b.CountRefused("a")
	b.CountRefused("a")
	b.Set(Server{Name: "a", State: Ready}, nil)
	if s, _ := b.Get("a"); s.RequestsRefused != 2 || s.State != Ready {
		t.Fatalf("a = %+v, want ready with 2 refused", s)
	}
	if l := b.List(); len(l) != 1 || l[0].RequestsRefused != 2 {
		t.Fatalf("List = %+v", l)
	}
	b.Delete("a")
	b.Set(Server{Name: "a"}, nil)
	if s, _ := b.Get("a"); s.RequestsRefused != 0 {
		t.Fatalf("a re-added = %+v, want the count gone with Delete", s)
	}
}
