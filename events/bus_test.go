package events

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// next reads one event with a deadline, failing the test without one.
func next(t *testing.T, s *Subscription) Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	e, err := s.Next(ctx)
	if err != nil {
		t.Fatalf("Next: %v", err)
	}
	return e
}

// empty checks that s holds nothing more: Next on a done context answers
// from what is buffered, without waiting.
func empty(t *testing.T, s *Subscription) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if e, err := s.Next(ctx); err == nil {
		t.Fatalf("Next = %v, want nothing more", e)
	}
}

func added(server string) Event { return ServerAdded{Header: Header{Server: server}} }

func TestSeqOrderUnderConcurrentEmit(t *testing.T) {
	var reduced []uint64
	bus := NewBus(&Options{Buffer: 10000, Reducer: func(e Event) Event { reduced = append(reduced, e.Head().Seq); return e }})
	defer bus.Close()
	sub := bus.Subscribe(SubscribeOptions{})
	defer sub.Close()
	const workers, each = 8, 500
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				bus.Emit(ServerLog{Header: Header{Server: fmt.Sprint(w)}, Text: fmt.Sprint(i)})
			}
		})
	}
	wg.Wait()
	last := map[string]int{}
	for i := range workers * each {
		e := next(t, sub).(ServerLog)
		if e.Seq != uint64(i+1) || reduced[i] != e.Seq {
			t.Fatalf("event %d has Seq %d (reducer saw %d), want %d", i, e.Seq, reduced[i], i+1)
		}
		// Each emitter's own events keep their order.
		var n int
		fmt.Sscan(e.Text, &n)
		if prev, ok := last[e.Server]; ok && n != prev+1 {
			t.Fatalf("emitter %s: %d after %d", e.Server, n, prev)
		}
		last[e.Server] = n
	}
	empty(t, sub)
}

func TestReducerRunsInsideEmit(t *testing.T) {
	clock := at
	var got Event
	bus := NewBus(&Options{Now: func() time.Time { return clock }, Reducer: func(e Event) Event { got = e; return e }})
	defer bus.Close()
	for i := range 3 {
		clock = clock.Add(time.Second)
		bus.Emit(StateChanged{Header: Header{Server: "fs"}, From: "starting", To: "ready", Restarts: i})
		e, ok := got.(StateChanged)
		if !ok || e.Seq != uint64(i+1) || !e.Time.Equal(clock) || e.Restarts != i || e.Server != "fs" {
			t.Fatalf("after Emit %d the reducer saw %#v", i, got)
		}
	}
}

// An event the reducer returns nil for is gone: no subscriber and no
// history sees it, and the next event takes its Seq.
func TestReducerDropsNil(t *testing.T) {
	bus := NewBus(&Options{Reducer: func(e Event) Event {
		if sc, ok := e.(StateChanged); ok && sc.To == "same" {
			return nil
		}
		return e
	}})
	defer bus.Close()
	sub := bus.Subscribe(SubscribeOptions{})
	defer sub.Close()
	bus.Emit(ServerAdded{Header: Header{Server: "fs"}})
	bus.Emit(StateChanged{Header: Header{Server: "fs"}, To: "same"})
	bus.Emit(ServerRemoved{Header: Header{Server: "fs"}})
	for i, want := range []string{TypeServerAdded, TypeServerRemoved} {
		if e := next(t, sub); e.Type() != want || e.Head().Seq != uint64(i+1) {
			t.Errorf("got %s, want %s with a gapless seq", e, want)
		}
	}
	empty(t, sub)
	old := bus.Subscribe(SubscribeOptions{From: 1})
	defer old.Close()
	if e := next(t, old); e.Type() != TypeServerAdded {
		t.Errorf("history starts with %s", e)
	}
	if e := next(t, old); e.Type() != TypeServerRemoved {
		t.Errorf("history holds %s after server_added", e)
	}
}

func TestStuckSubscriberDoesNotBlockEmit(t *testing.T) {
	bus := NewBus(&Options{Buffer: 256})
	defer bus.Close()
	stuck := bus.Subscribe(SubscribeOptions{})
	defer stuck.Close()
	const n = 100_000
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range n {
			bus.Emit(ServerLog{Header: Header{Server: "fs"}, Text: "x"})
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Emit blocked on a subscriber that does not read")
	}
	if l := stuck.buf.len(); l != 256 {
		t.Fatalf("the stuck subscriber holds %d events, want its buffer of 256", l)
	}
	for i := range 256 {
		if e := next(t, stuck); e.Head().Seq != uint64(i+1) {
			t.Fatalf("buffered event %d has Seq %d", i, e.Head().Seq)
		}
	}
	d, ok := next(t, stuck).(Dropped)
	if !ok || d.N != n-256 || d.Seq != n {
		t.Fatalf("after the buffer got %#v, want Dropped{N: %d} with Seq %d", d, n-256, n)
	}
	empty(t, stuck)
	// Caught up, it gets the next event as usual.
	bus.Emit(added("fs"))
	if e := next(t, stuck); e.Head().Seq != n+1 {
		t.Fatalf("after the gap got %v", e)
	}
}

func TestGapComesBeforeLaterEvents(t *testing.T) {
	bus := NewBus(&Options{Buffer: 4})
	defer bus.Close()
	sub := bus.Subscribe(SubscribeOptions{})
	defer sub.Close()
	for range 10 {
		bus.Emit(added("fs")) // 1-4 kept, 5-10 missed
	}
	next(t, sub)
	next(t, sub) // room for the gap and one more
	bus.Emit(added("fs"))
	want := []string{"#3 fs: added", "#4 fs: added", "#10 dropped 6 events", "#11 fs: added"}
	for _, w := range want {
		if e := next(t, sub); e.String() != w {
			t.Fatalf("got %q, want %q", e, w)
		}
	}
	empty(t, sub)
}

func TestResumeFromHistory(t *testing.T) {
	bus := NewBus(&Options{History: 8})
	defer bus.Close()
	for i := range 6 {
		bus.Emit(added(fmt.Sprint("s", i)))
	}
	sub := bus.Subscribe(SubscribeOptions{From: 4})
	defer sub.Close()
	bus.Emit(added("live"))
	for _, w := range []uint64{4, 5, 6, 7} {
		if e := next(t, sub); e.Head().Seq != w {
			t.Fatalf("got %v, want Seq %d", e, w)
		}
	}
	empty(t, sub)
}

func TestResumeTooOldGetsDroppedFirst(t *testing.T) {
	bus := NewBus(&Options{History: 4})
	defer bus.Close()
	for range 10 {
		bus.Emit(added("fs")) // history keeps 7-10
	}
	sub := bus.Subscribe(SubscribeOptions{From: 2})
	defer sub.Close()
	d, ok := next(t, sub).(Dropped)
	if !ok || d.N != 5 || d.Seq != 6 {
		t.Fatalf("first event %#v, want Dropped{N: 5} (2-6) with Seq 6", d)
	}
	for _, w := range []uint64{7, 8, 9, 10} {
		if e := next(t, sub); e.Head().Seq != w {
			t.Fatalf("got %v, want Seq %d", e, w)
		}
	}
	empty(t, sub)
}

func TestServerLogStaysOutOfHistory(t *testing.T) {
	bus := NewBus(&Options{History: 4})
	defer bus.Close()
	bus.Emit(added("fs"))
	for range 100 {
		bus.Emit(ServerLog{Header: Header{Server: "fs"}, Text: "chatty"})
	}
	bus.Emit(ServerRemoved{Header: Header{Server: "fs"}})
	sub := bus.Subscribe(SubscribeOptions{From: 1})
	defer sub.Close()
	if e := next(t, sub); e.Type() != TypeServerAdded || e.Head().Seq != 1 {
		t.Fatalf("first replayed %v, want the server_added that 100 log lines did not push out", e)
	}
	if e := next(t, sub); e.Type() != TypeServerRemoved || e.Head().Seq != 102 {
		t.Fatalf("second replayed %v, want server_removed #102", e)
	}
	empty(t, sub)
}

// A server refused 2000 times does not push another server's lifecycle
// out of the history either.
func TestRequestRefusedStaysOutOfHistory(t *testing.T) {
	bus := NewBus(&Options{History: 4})
	defer bus.Close()
	bus.Emit(added("fs"))
	for range 2000 {
		bus.Emit(RequestRefused{Header: Header{Server: "chatty"}, Method: "sampling/createMessage", Limit: "rate"})
	}
	sub := bus.Subscribe(SubscribeOptions{From: 1})
	defer sub.Close()
	if e := next(t, sub); e.Type() != TypeServerAdded || e.Head().Seq != 1 {
		t.Fatalf("first replayed %v, want the server_added that 2000 refusals did not push out", e)
	}
	empty(t, sub)
}

// A server flooding resource updates or its stderr while it starts does
// not push lifecycle events out of the history.
func TestResourceUpdatedStaysOutOfHistory(t *testing.T) {
	bus := NewBus(&Options{History: 4})
	defer bus.Close()
	bus.Emit(added("fs"))
	for range 2000 {
		bus.Emit(ResourceUpdated{Header: Header{Server: "chatty"}, URI: "demo://x"})
		bus.Emit(StartingOutput{Header: Header{Server: "chatty"}, Line: "downloading"})
	}
	sub := bus.Subscribe(SubscribeOptions{From: 1})
	defer sub.Close()
	if e := next(t, sub); e.Type() != TypeServerAdded || e.Head().Seq != 1 {
		t.Fatalf("first replayed %v, want the server_added that 2000 updates did not push out", e)
	}
	empty(t, sub)
}

// Tally shows an event to the Reducer only: no Seq, no history, no
// subscriber.
func TestTallyReachesOnlyTheReducer(t *testing.T) {
	var reduced []Event
	bus := NewBus(&Options{Reducer: func(e Event) Event { reduced = append(reduced, e); return e }})
	defer bus.Close()
	sub := bus.Subscribe(SubscribeOptions{})
	defer sub.Close()
	bus.Tally(RequestRefused{Header: Header{Server: "fs"}, Method: "m", Limit: "rate"})
	bus.Emit(added("fs"))
	if len(reduced) != 2 || reduced[0].Type() != TypeRequestRefused || reduced[0].Head().Seq != 0 || reduced[0].Head().Time.IsZero() {
		t.Fatalf("the reducer saw %v, want the tallied refusal (Seq 0, a time) then the added", reduced)
	}
	if e := next(t, sub); e.Type() != TypeServerAdded || e.Head().Seq != 1 {
		t.Fatalf("the subscriber got %v, want only server_added #1", e)
	}
	empty(t, sub)
	var nilBus *Bus
	nilBus.Tally(added("fs"))
}

func TestServerFilter(t *testing.T) {
	bus := NewBus(nil)
	defer bus.Close()
	bus.Emit(added("fs"))
	bus.Emit(added("github"))
	sub := bus.Subscribe(SubscribeOptions{Server: "fs", From: 1})
	defer sub.Close()
	bus.Emit(ConfigSaved{})
	bus.Emit(ServerLog{Header: Header{Server: "github"}})
	bus.Emit(ServerLog{Header: Header{Server: "fs"}, Text: "hi"})
	for _, w := range []string{"#1 fs: added", "#5 fs: [] hi"} {
		if e := next(t, sub); e.String() != w {
			t.Fatalf("got %q, want %q", e, w)
		}
	}
	empty(t, sub)
}

func TestCloseIdempotentAndConcurrent(t *testing.T) {
	bus := NewBus(nil)
	subs := make([]*Subscription, 4)
	for i := range subs {
		subs[i] = bus.Subscribe(SubscribeOptions{})
	}
	bus.Emit(added("fs"))
	// A reader waiting in Next is woken by its own Close.
	waiting := make(chan error)
	go func() {
		var err error
		for err == nil { // #1, then a wait that only Close ends
			_, err = subs[0].Next(context.Background())
		}
		waiting <- err
	}()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(subs[0].Close)
		wg.Go(subs[1].Close)
	}
	wg.Wait()
	if err := <-waiting; !errors.Is(err, ErrClosed) {
		t.Fatalf("a waiting Next after Close = %v, want ErrClosed", err)
	}
	if _, err := subs[1].Next(t.Context()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Next after Close = %v, want ErrClosed at once, buffer or not", err)
	}
	if len(bus.subs) != 2 {
		t.Fatalf("the bus still holds %d subscriptions, want the 2 not closed", len(bus.subs))
	}
	for range 4 {
		wg.Go(bus.Close)
		wg.Go(subs[2].Close)
	}
	wg.Wait()
	// The bus's Close lets a subscriber drain what it holds.
	if e := next(t, subs[3]); e.Head().Seq != 1 {
		t.Fatalf("after the bus closed got %v, want the buffered #1", e)
	}
	if _, err := subs[3].Next(t.Context()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Next after the bus closed and drained = %v, want ErrClosed", err)
	}
	subs[3].Close()
	late := bus.Subscribe(SubscribeOptions{})
	if _, err := late.Next(t.Context()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Next on a Subscribe after Close = %v, want ErrClosed", err)
	}
	var seen int
	reduced := NewBus(&Options{Reducer: func(e Event) Event { seen++; return e }})
	reduced.Close()
	reduced.Emit(added("fs"))
	if seen != 1 {
		t.Fatalf("the reducer saw %d events emitted after Close, want 1", seen)
	}
}

func TestEmitIgnoresDropped(t *testing.T) {
	bus := NewBus(nil)
	defer bus.Close()
	bus.Emit(Dropped{N: 3})
	bus.Emit(nil)
	if s := bus.LastSeq(); s != 0 {
		t.Fatalf("LastSeq = %d after emitting only a Dropped and nil, want 0", s)
	}
}

// TestSubscribeAndCloseWhileEmitting runs subscribers that come and go
// against emitters (for -race): each subscription sees strictly increasing Seqs, a Dropped included.
func TestSubscribeAndCloseWhileEmitting(t *testing.T) {
	bus := NewBus(&Options{Buffer: 8, History: 16})
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
					bus.Emit(added("fs"))
				}
			}
		})
	}
	for i := range 200 {
		sub := bus.Subscribe(SubscribeOptions{From: bus.LastSeq() - min(bus.LastSeq(), 20)})
		var last uint64
		for range 10 {
			e := next(t, sub)
			if s := e.Head().Seq; s <= last {
				t.Fatalf("subscription %d: Seq %d after %d", i, s, last)
			}
			last = e.Head().Seq
		}
		sub.Close()
	}
	close(stop)
	wg.Wait()
	bus.Close()
}

// A subscription's own Buffer holds more than the Bus's default before it
// drops: 50 events fit in a buffer of 64 on a Bus whose default is 8.
func TestSubscriptionBuffer(t *testing.T) {
	bus := NewBus(&Options{Buffer: 8})
	defer bus.Close()
	big := bus.Subscribe(SubscribeOptions{Buffer: 64})
	small := bus.Subscribe(SubscribeOptions{})
	for range 50 {
		bus.Emit(ServerAdded{Header: Header{Server: "fs"}})
	}
	bus.Close()
	count := func(s *Subscription) (events, dropped int) {
		for {
			e, err := s.Next(t.Context())
			if err != nil {
				return
			}
			if _, ok := e.(Dropped); ok {
				dropped++
			} else {
				events++
			}
		}
	}
	if n, d := count(big); n != 50 || d != 0 {
		t.Errorf("with Buffer 64: %d events and %d drops, want 50 and none", n, d)
	}
	if n, d := count(small); n != 8 || d != 1 {
		t.Errorf("with the Bus's Buffer 8: %d events and %d drops, want 8 and one Dropped", n, d)
	}
}
