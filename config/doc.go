// Package config loads, validates, masks, patches and saves the MCP server
// configuration of mcpvisor, the file <state_dir>/mcp_servers.json.
//
// # The file
//
//	{"servers": {
//	  "fs": {"type": "local", "command": ["npx", "-y", "server-fs", "/tmp"],
//	         "env": {"TOKEN": "s3cret"}, "enabled": true, "timeout_seconds": 30},
//	  "remote": {"type": "http", "url": "https://example.com/mcp",
//	             "auth": {"kind": "bearer", "token": "t"}, "max_concurrent_calls": 4}
//	}}
//
// Calls to one server run concurrently unless "max_concurrent_calls" (0,
// the default, is unlimited; 1 is single-flight) makes later ones wait.
//
// The order of "servers" is the startup order, so [Parse] keeps it and
// [Marshal] writes it back unchanged. Fields this version does not know, at
// the top level, in a server entry or in its "auth" object, survive a
// load/save round trip: an older binary must not destroy what a newer one
// wrote.
//
// [Parse] separates two kinds of problems. A file that is not JSON, has a
// field of the wrong JSON type, an invalid or duplicate server name is
// structurally broken and does not parse. A server that is well formed but
// unusable (unknown type, missing command, bad URL, out-of-range timeout...)
// still loads, and [Server.Validate] reports it, so one bad entry does not
// take the others down with it.
//
// A file that is empty or holds only JSON whitespace is an empty
// configuration rather than an error: editors and crashes truncate files, and
// refusing to overwrite a file with nothing in it would protect nothing.
//
// # References
//
// The values of command, cwd, env, url, headers and the auth secrets may
// refer to the environment: ${NAME}, ${NAME:-default} (NAME when set and
// not empty), ${env:NAME}; $${ is a literal ${, and every other $ is
// literal. [Server.Validate] reports a malformed reference on its field;
// [Server.Expand] replaces them, at connect only, on a copy that
// [Marshal] refuses to write, so the file always keeps the reference.
// [EscapeLiteral] and [ReferencedNames] are for importers.
//
// # Authentication
//
// The "auth" object of a remote server has a "kind" ([Auth] lists the
// fields of each):
//
//   - "none": no credentials, the default.
//   - "bearer": a static "token" sent as "Authorization: Bearer".
//   - "oauth": OAuth 2.1 authorization code with PKCE, for a server a user
//     signs in to. The client is pre-registered ("client_id", and
//     "client_secret" if it is confidential), identified by its Client ID
//     Metadata Document ("client_metadata_url"), or registers dynamically.
//   - "client_credentials": the OAuth client credentials grant, machine to
//     machine. It needs "client_id" and one credential: a "client_secret"
//     (sent by "client_secret_basic", the default, or "client_secret_post")
//     or a "private_key" that signs a JWT ("private_key_jwt").
//
// Both OAuth kinds need Streamable HTTP (type "http"), and both take
// "scopes". A field the kind does not use is an error.
//
//	"auth": {"kind": "client_credentials", "client_id": "mcpvisor",
//	         "private_key": "-----BEGIN PRIVATE KEY-----\n...", "scopes": ["read"]}
//
// # Secrets
//
// Every value of env and headers, the bearer token, the OAuth client secret,
// the private key and the password of a URL's userinfo are secrets,
// whatever their names.
// A secret made only of references holds none: its view shows it
// ([SecretView.Reference]).
// There are two serialisations: the storage form written by [Marshal], which
// holds full values and is only for the file, and the response form
// ([ServerView], from [Server.View]), which every API answer, log line and
// debug dump uses. [Server] and [Auth] format themselves (fmt, encoding/json,
// log/slog) in the response form, so an accidental log statement cannot leak
// a credential. No error returned by this package contains a secret value.
//
// # Editing
//
// [ApplyPatch] is the PATCH rule of the management API as a pure function:
// an absent field is kept, a present one replaces, and for the secret maps
// and auth secrets the empty string deletes. Changing the auth kind drops
// the fields the new kind does not use. [DecodeServer] decodes the body
// of a create request.
//
// # Saving
//
// [Store.Save] is atomic and owner-only: it writes a 0600 temporary file in
// the same directory, syncs it and renames it over the target. It refuses to
// overwrite a file that does not parse ([ErrUnparsable]), because that file
// may hold credentials the user is in the middle of fixing by hand.
//
// # Limits and links
//
// The file is at most [MaxFileSize] (4 MiB): a larger one is not read past
// the limit and counts as unparsable, and Save refuses to write one
// ([ErrTooLarge]). A file that is a symbolic link is read through and
// written through: Save replaces the link's target atomically (the
// temporary file is made next to the target) and the link stays a link. A
// link that points nowhere, into a loop or to a directory is an error for
// Load and Save, and nothing is written. [Store.OpenModes] lists a state
// dir or file that other users can write or read, for a warning.
package config
