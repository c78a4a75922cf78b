package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/status"
	"github.com/openprogram/mcpvisor/tools"
)

// mirror keeps one gateway server in step with the runtime. Its state is
// its run goroutine's, except during MCPServer's first sync (before run
// starts); the resource listings it starts report back on reports.
type mirror struct {
	rt     *Runtime
	srv    *mcp.Server
	opts   MCPServerOptions
	logger *slog.Logger

	tools map[string]digest // registry name -> the digest of what was added
	// served is the names in tools, published for callUnlisted (which
	// runs on the SDK's goroutines).
	served  atomic.Pointer[map[string]bool]
	prompts map[string]digest
	// resources are each ready server's last listing; exposed what was
	// added to srv (its digest) under which URI (resource) or URI
	// template.
	resources map[string]serverResources
	exposed   map[string]digest

	reports  chan serverResources
	listings sync.WaitGroup
	done     chan struct{} // closed when run ends: listings report no more
	gen      map[string]uint64
	// inflight: a listing of the server runs; again: list once more after.
	inflight, again map[string]bool

	// templates and servedResources are who owns each template and
	// resource served, by the URI (template) served (syncResources
	// publishes them), for completions and subscriptions, which run on
	// the SDK's goroutines.
	templates, servedResources atomic.Pointer[map[string]servedOwner]
	// subs are the clients' resource subscriptions.
	subs *gatewaySubs
	// logs feeds forwardLogs; a line that finds it full is dropped.
	logs chan events.ServerLog
	// outbox sends each client session its log lines.
	outbox *outboxes
	// parked are the calls of clients on 2026-07-28 run in rounds; run's
	// end stops them.
	parked *parkedCalls
	// startup holds list requests back until startup settled
	// (mcpserver_startup.go).
	startup startupGate
}

// digest is the SHA-256 of the JSON of an item the server serves: enough
// to tell a changed item from the same one, without holding its JSON.
type digest [sha256.Size]byte

// digestOf is the digest of item's JSON.
func digestOf(item any) digest {
	data, _ := json.Marshal(item)
	return sha256.Sum256(data)
}

func newMirror(r *Runtime, opts MCPServerOptions) *mirror {
	return &mirror{rt: r, opts: opts, logs: make(chan events.ServerLog, gatewayLogBuffer), logger: opts.Logger.With("component", "gateway"),
		tools: map[string]digest{}, prompts: map[string]digest{}, resources: map[string]serverResources{}, exposed: map[string]digest{},
		reports: make(chan serverResources), done: make(chan struct{}), gen: map[string]uint64{},
		inflight: map[string]bool{}, again: map[string]bool{}, subs: newGatewaySubs(r), outbox: newOutboxes()}
}

// run follows the registry (tools) and the event stream (prompts, server
// states for resources) until ctx ends or the runtime shuts down.
func (m *mirror) run(ctx context.Context, toolChanges *tools.Subscription, evs *events.Subscription) {
	ctx, cancel := context.WithCancel(ctx)
	// helpers are run's goroutines; each returns once ctx ends, and run
	// returns after them, so none outlives the gateway server.
	var helpers sync.WaitGroup
	defer func() {
		cancel()
		helpers.Wait()
		m.outbox.wait()
		m.parked.close()
		m.startup.close()
		close(m.done)
		m.listings.Wait()
	}()
	defer toolChanges.Close()
	defer evs.Close()
	helpers.Go(func() {
		select {
		case <-ctx.Done():
		case <-m.rt.stopWatch:
			cancel()
		}
	})
	helpers.Go(func() { m.forwardLogs(ctx) })
	helpers.Go(func() { m.subs.forward(ctx, m.srv) })
	incoming := make(chan events.Event)
	helpers.Go(func() {
		for {
			e, err := evs.Next(ctx)
			if err != nil {
				if !errors.Is(err, context.Canceled) {
					cancel()
				}
				return
			}
			select {
			case incoming <- e:
			case <-ctx.Done():
				return
			}
		}
	})
	for {
		select {
		case <-ctx.Done():
			return
		case <-toolChanges.C:
			m.syncTools()
			m.settleStartup()
		case l := <-m.reports:
			m.listed(l)
			m.settleStartup()
		case e := <-incoming:
			m.event(e)
			m.startupEvent(e)
			m.settleStartup()
		}
	}
}

// event applies what an event says about prompts and resources.
func (m *mirror) event(e events.Event) {
	switch e := e.(type) {
	case events.PromptsChanged:
		m.syncPrompts()
	case events.StateChanged:
		switch {
		case e.To == string(status.Ready):
			m.relist(e.Server)
		case e.From == string(status.Ready):
			m.forget(e.Server)
		}
		m.syncPrompts()
	case events.ResourcesChanged:
		m.relist(e.Server)
	case events.ResourceUpdated:
		m.subs.updated(e.Server, e.URI)
	case events.ServerRemoved:
		m.forget(e.Server)
		m.syncPrompts()
	case events.ServerLog:
		if !m.serverVisible(e.Server) {
			return
		}
		select {
		case m.logs <- e:
		default: // the clients are slow: drop rather than queue
		}
	case events.Dropped:
		// Missed events: start again from what is there now.
		m.syncTools()
		m.syncPrompts()
		m.relistReady()
	}
}
