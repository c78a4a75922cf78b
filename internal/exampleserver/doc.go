// Package exampleserver is the built-in example MCP server: the program the
// demo binary runs as `demo serve`, and the real subprocess that mcpvisor's
// tests and benchmarks supervise.
//
// # Tools
//
// The server registers, in this order:
//
//   - echo {text}: returns exactly text.
//   - add {a, b}: returns a+b, formatted with strconv.FormatFloat(x, 'f', -1, 64).
//   - sleep {ms}: sleeps ms milliseconds, returning early with the context's
//     error when the call is cancelled (after the stderr line "sleep of
//     <ms>ms cancelled"); otherwise returns "slept <ms>ms".
//   - fail {}: returns a result with IsError set and "this tool always fails".
//   - image {}: returns a 2x2 PNG as an image block.
//   - resource {}: returns an embedded text resource "demo://resource/1".
//   - env {name}: returns the value of an environment variable of the server
//     process ("" when unset).
//   - stderr {text}: writes text as one line to [Options.Stderr], returns "ok".
//   - future {}: returns a text block and a marker block, which [Run] turns
//     into a block of a content type no MCP version defines.
//   - schema {zeta, alpha}: returns "ok"; its input schema is [RawSchema].
//   - described {}: returns {"zeta":1,"alpha":"a"} as text and as
//     structured content; it has a title, annotations (read-only true,
//     open-world false, destructive not sent), the output schema
//     [RawOutputSchema], an icon and _meta.ui.resourceUri
//     [AppResourceURI] (the app's resource, which it shares).
//   - consult {question, tool_choice}: sampling with tools. It asks the
//     client's model question, offering it the tool add {a, b} with
//     tool_choice (auto, required (the default) or none); runs each use of
//     add the model answers with and asks again, the conversation carrying
//     the uses and their results, with tool choice none. It returns the
//     lines "tool_use <id> <name> <input JSON>", "tool_result <id> <sum>",
//     "answer: <the last answer's text>" and "stop_reason: <its reason>".
//     A client that does not declare sampling with tools gets a tool error.
//
// With [Options.ResultTools] (demo serve -result-tools) it also has
// tools whose results a client must check or keep; those with an output
// schema declare [StructuredSchema] unless noted:
//
//   - structured {text}: returns {"text":text,"n":1,"id":[StructuredID]}
//     as structured content (and as text), matching its schema; keys in
//     that order, and an id a float64 cannot hold.
//   - structured_broken {text}: the same with n = text, which breaks its
//     schema (n must be an integer).
//   - structured_missing {}: returns text only, no structured content.
//   - structured_failing {}: returns isError with {"n":"x"}.
//   - remote_ref {}: returns {"x":1}; its schema, [RemoteRefSchema], has a
//     $ref to a document on another host.
//   - audio {}: one audio block, [AudioMIMEType] with [AudioData].
//   - annotated {text}: a text block [AnnotatedText] annotated for the
//     user (priority [AnnotatedPrio], last modified [AnnotatedWhen]), a
//     resource link to [LinkURIPrefix]+text named "note "+text (title
//     "Note", description "the note "+text, [LinkMIMEType], [LinkSize]
//     bytes), and an embedded resource [EmbeddedURI] ([EmbeddedMIMEType]).
//
// With [Options.IconFlood] (demo serve -icon-flood) it also has a tool
// and a prompt named [IconFloodName], each with [IconFloodCount] icons: a
// 1 MiB data: URI, [IconFloodURL] followed by the value of $[IconTokenEnv],
// then [FloodIconURL] of 2, 3 and so on.
//
// With [Options.SizedTools] (demo serve -sized-tools) it also has the
// tool sized {text_bytes, text_blocks, rune, image_bytes, images,
// audio_bytes, audios, structured_bytes}: text_blocks text blocks of
// text_bytes bytes each (rune repeated, rounded down to whole runes),
// then images image blocks ([SizedImageMIMEType]) of image_bytes zero
// bytes each and audios audio blocks ([SizedAudioMIMEType]) of
// audio_bytes zero bytes each, and structured content {"pad":"xx…"} of
// about structured_bytes bytes; each size is at most 8 MiB, each count
// at most 64, and the whole answer (media as base64) at most 12 MiB.
//
// With [Options.ProgressTools] (demo serve -progress-tools) it also has
//
//   - progress {period_ms, total_ms}: sends a progress report ("step n")
//     every period_ms, for total_ms (0: until cancelled), then answers
//     "sent <n> progress reports";
//   - progress_silent {reports, period_ms}: sends reports progress reports
//     period_ms apart, then goes silent until cancelled;
//   - meta {}: returns the request's _meta as JSON (null when none).
//
// Progress is reported only for a request that carries a progressToken.
//
// With [Options.ClientTools] (demo serve -client-tools) it also has tools
// that ask the client during the call (with requests of their own before
// protocol 2026-07-28, as input requests of their answer from then on):
//
//   - elicit {message}: a form elicitation of message (default "Your
//     answer?") for one string, answer; returns "<action> <content as
//     JSON>", as "accept {"answer":"yes"}";
//   - roots {}: roots/list; returns "roots: " and the roots' URIs, one a
//     line.
//
// and it writes [RootsChangedLine] to stderr on each
// notifications/roots/list_changed it gets.
//
// With [Options.NoLogging] (demo serve -no-logging) its capabilities
// leave logging out (a server that never logs).
//
// # Prompts and resources
//
//   - prompt greet {name, style}: one user message, "Please greet <name>."
//     or with a style "Please greet <name> <style>."; without name, the
//     request fails with a JSON-RPC invalid-params error. Title "Greet
//     someone", icons [SmallIcon] and [BigIcon].
//   - resource demo://readme (text/markdown): a few lines about the server.
//     Title "About the example server", icons [SmallIcon] and [BigIcon],
//     annotations audience user and assistant, priority 0.8, lastModified
//     [ReadmeModified].
//   - resource template demo://notes/{id} (text/plain): "note <id>", and
//     "note <id> (version <n>)" once the update tool changed it n times.
//     Title "Notes", icon [SmallIcon], annotations audience assistant.
//     Every resource is subscribable (resources.subscribe).
//   - completions (completion/complete): greet's name (Ada, Alan, Alice,
//     Bob, Grace; full names when the context has style "formally"), its
//     style (boldly, briefly, formally, warmly, wittily) and the note id
//     (1, 2, 3, 7, 10, 12, 20): the candidates that start with the value.
//
// With [Options.UpdateTool] (demo serve -update-tool) the server also has
// update {id}: it raises the note's version and sends
// notifications/resources/updated for demo://notes/<id> to the sessions
// subscribed to it (on protocol 2026-07-28, on their subscriptions/listen
// stream for the URI); and end_subscriptions {refuse, keep}: it ends the
// open resource subscription streams (the server answers their listen
// requests), with refuse refuses every new one, with keep only counts,
// and answers "ended N, open M, opened K".
//
// With [Options.FreezeTool] (demo serve -freeze-tool) the server also has
// freeze {ms}: it answers "frozen", then holds every request (not the
// notifications) for ms milliseconds, or for good without ms, while its
// process keeps running, as a deadlocked server does; and probes {}: the
// ping and server/discover requests received so far, as JSON
// {"ping": N, "discover": M} (a 2026-07-28 session starts with one
// server/discover of its own), for tests of a client's keepalive.
//
// # Who it is
//
// Its serverInfo has the name [Options.Name], the title [Title], the
// version 0.1.0, the website [WebsiteURL] and two icons (a small SVG
// data: URI, and [IconURL] for dark themes). Its instructions are a fixed
// text naming the tools, prompts and resources, followed by the text of
// [Options.InstructionsFile] (demo serve -instructions-file PATH), read
// at start: rewriting the file and restarting the server changes them.
//
// # MCP App
//
// To a client that advertises the io.modelcontextprotocol/ui extension
// with MIME type [AppMIMEType] the server also lists
//
//   - app {}: "app opened"; _meta.ui.resourceUri [AppResourceURI].
//   - app_refresh {}: "app refreshed"; _meta.ui.visibility ["app"], for
//     the app only.
//   - resource [AppResourceURI] ([AppMIMEType]): [AppHTML], its contents'
//     _meta [AppResourceMeta] (a CSP, the clipboard-write permission and
//     prefersBorder). Any client may read it.
//
// With [Options.LeakTool] a read of ui://demo/leak/NAME fails with an
// error quoting the environment variable NAME.
//
// # Changing the lists
//
// With [Options.ChangeTool] (demo serve -change-tool) the server also has
//
//   - change {list}: list is "tools", "prompts" or "resources". It adds to
//     that list the tool extra_<n> (an echo {text}), the prompt extra_<n>
//     (one user message, "extra prompt <n>") or the resource
//     demo://extra/<n> (text/plain, "extra resource <n>"), n counting from 1
//     per list, and returns "added tool extra_<n>", "added prompt extra_<n>"
//     or "added resource demo://extra/<n>".
//
// The SDK then sends notifications/tools/list_changed (or prompts/,
// resources/) to every connected session, 10ms after the change; changes
// less than 10ms apart share one notification. A session of
// protocol 2026-07-28 or later receives it only on its subscriptions/listen
// stream, which the go-sdk client opens when it sets the matching
// ClientOptions handler. The additions belong to the server and last as
// long as it does.
//
// # A server slow to start
//
// With [Options.InitializeDelay] (demo serve -initialize-delay 100ms) the
// server waits that long before it answers its opening handshake
// (initialize, or server/discover on protocol 2026-07-28). With
// [Options.InitializeDir] (-initialize-dir DIR) it keeps a file in DIR
// while it waits and appends "<name> <n>" to DIR/[InitializeLog], n being
// how many servers sharing DIR were waiting in theirs then (itself
// included); the file is gone before the answer is written, so n never
// exceeds the handshakes a client had in flight. With
// [Options.InitializeBarrier] N as well (-initialize-barrier N) a
// handshake first waits until N servers sharing DIR have begun theirs
// (bounded: 30 s), so the first N are in flight together whatever the
// machine's load.
//
// # Use in tests
//
// In-process, pair [NewServer] with mcp.NewInMemoryTransports. As a process,
// call [Main] (or [Run] on your own streams); the fault-injection fields of
// [Options] make it misbehave in the ways a supervisor has to survive.
package exampleserver
