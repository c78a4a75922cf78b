// Package tokenstore keeps what an OAuth login of a server produced, so a
// restarted runtime reconnects without a browser: the tokens with an
// absolute expiry, the client the authorization server registered (with its
// redirect URI, whose loopback port later logins reuse), and the discovered
// authorization server metadata (a cold-start refresh goes straight to the
// stored token endpoint).
//
// One file per server, <state dir>/oauth/<name>.json, owner-only and
// replaced atomically, at most [MaxRecordSize]. A record file that is a
// symbolic link is read and written through (the link stays a link) and
// deleted with its target. Every field but the public metadata is a secret:
// a Record never formats itself with its tokens or client secret.
package tokenstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/atomicfile"
)

// Record is one server's stored login.
type Record struct {
	// ServerURL is the MCP endpoint the login was for. A record made for
	// another URL (the user changed it) is not used.
	ServerURL string `json:"server_url"`
	// AuthKey fingerprints the auth config (client, secret, scopes) the
	// login was made with; a record for another config is not used.
	AuthKey string `json:"auth_key,omitempty"`
	// NeedsLogin: the last refresh was refused or the last login failed;
	// only the user may start the next login.
	NeedsLogin bool `json:"needs_login,omitempty"`
	// Token is the last token set, nil after a refused refresh.
	Token *Token `json:"token,omitempty"`
	// Client is how mcpvisor is registered at the authorization server.
	Client *Client `json:"client,omitempty"`
	// AuthServer is the authorization server the tokens come from.
	AuthServer *AuthServer `json:"authorization_server,omitempty"`
}

// Token is a token set with an absolute expiry.
type Token struct {
	AccessToken  string    `json:"access_token"`
	TokenType    string    `json:"token_type,omitempty"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	ExpiresAt    time.Time `json:"expires_at,omitzero"`
	Scopes       []string  `json:"scopes,omitempty"`
}

// Client is the registered OAuth client.
type Client struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret,omitempty"`
	// RedirectURI is the registered loopback redirect; its port is reused
	// by later logins so that it keeps matching the registration.
	RedirectURI string `json:"redirect_uri"`
	// AuthStyle is how the client authenticates at the token endpoint, as
	// golang.org/x/oauth2.AuthStyle.
	AuthStyle int `json:"auth_style,omitempty"`
	// Registered is true for a dynamically registered client, which is
	// valid only at the authorization server that registered it.
	Registered bool `json:"registered,omitempty"`
}

// AuthServer is the discovered authorization server.
type AuthServer struct {
	Issuer                string `json:"issuer,omitempty"`
	AuthorizationEndpoint string `json:"authorization_endpoint"`
	TokenEndpoint         string `json:"token_endpoint"`
	// Metadata is the metadata document as served, kept for diagnosis.
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

// String keeps secrets out of logs and errors.
func (r Record) String() string {
	return fmt.Sprintf("tokenstore.Record{server_url: %q, token: %t, client: %t}", r.ServerURL, r.Token != nil, r.Client != nil)
}

// MaxRecordSize bounds a record file, 2 MiB: a record is a few kilobytes
// of tokens plus the authorization server's metadata document, which is
// kept only up to 1 MiB. A larger file is not read past the limit: it is
// reported, and the server needs a login again.
const MaxRecordSize = 2 << 20

// Store is the set of records under a state directory.
type Store struct {
	// Dir returns the state directory; called on every operation, never
	// cached, like config.Store.
	Dir func() (string, error)
	// Lock, if set, orders SaveIf against Delete: a connection that
	// checks it is still wanted and writes can never land after the
	// delete of a server that stopped it first. One per Runtime.
	Lock *sync.Mutex
}

// ErrSkipped: SaveIf's condition was false; nothing was written.
var ErrSkipped = errors.New("token store: not saved")

func (s Store) lock() func() {
	if s.Lock == nil {
		return func() {}
	}
	s.Lock.Lock()
	return s.Lock.Unlock
}

// SaveIf saves r if ok() holds, both under the store's Lock; otherwise it
// returns ErrSkipped.
func (s Store) SaveIf(name string, r *Record, ok func() bool) error {
	defer s.lock()()
	if !ok() {
		return ErrSkipped
	}
	return s.save(name, r)
}

// path returns the record file of server name. Names are validated by
// config.ValidateName, so they cannot climb out of the directory; check
// anyway, since a wrong path here would write a secret somewhere else.
func (s Store) path(name string) (string, error) {
	if err := config.ValidateName(name); err != nil {
		return "", fmt.Errorf("token store: %w", err)
	}
	if s.Dir == nil {
		return "", errors.New("token store: Dir is nil")
	}
	dir, err := s.Dir()
	if err != nil {
		return "", fmt.Errorf("token store: resolving state dir: %w", err)
	}
	if dir == "" {
		return "", errors.New("token store: empty state dir")
	}
	return filepath.Join(dir, "oauth", name+".json"), nil
}

// Load returns the record of server name, or nil if there is none. A
// damaged file, one over MaxRecordSize, a dangling symbolic link are
// reported, not treated as absent: the caller decides whether to log in
// again.
func (s Store) Load(name string) (*Record, error) {
	path, err := s.path(name)
	if err != nil {
		return nil, err
	}
	data, err := atomicfile.Read(path, MaxRecordSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading stored login of %q: %w", name, err)
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		// The syntax error may quote part of a token: say only where.
		return nil, fmt.Errorf("reading stored login of %q: %s is not valid JSON", name, path)
	}
	return &r, nil
}

// Save replaces the record of server name, owner-only and atomically.
func (s Store) Save(name string, r *Record) error {
	defer s.lock()()
	return s.save(name, r)
}

func (s Store) save(name string, r *Record) error {
	path, err := s.path(name)
	if err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("saving login of %q: %w", name, err)
	}
	if len(data) >= MaxRecordSize { // the newline makes one more
		return fmt.Errorf("saving login of %q: the record would be %d bytes, over the %s limit", name, len(data)+1, atomicfile.Size(MaxRecordSize))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("saving login of %q: %w", name, err)
	}
	if err := atomicfile.Write(path, append(data, '\n')); err != nil {
		return fmt.Errorf("saving login of %q: %w", name, err)
	}
	return nil
}

// Delete removes the record of server name; a missing one is no error. A
// record file that is a symbolic link is removed with its target, which
// holds the secrets.
func (s Store) Delete(name string) error {
	defer s.lock()()
	path, err := s.path(name)
	if err != nil {
		return err
	}
	if err := atomicfile.Remove(path); err != nil {
		return fmt.Errorf("deleting login of %q: %w", name, err)
	}
	return nil
}

// OpenModes lists how the oauth directory and the records of the servers
// in names are open to other users, as [config.Store.OpenModes] does for
// the config file: the directory writable, a record readable by group or
// others. Save writes records 0600 whatever their mode was.
func (s Store) OpenModes(names []string) []string {
	var out []string
	for i, name := range names {
		path, err := s.path(name)
		if err != nil {
			continue
		}
		if i == 0 {
			if p := atomicfile.ModeProblem(filepath.Dir(path), "login dir", 0o022, "writable"); p != "" {
				out = append(out, p)
			}
		}
		if p := atomicfile.ModeProblem(path, "stored login", 0o044, "readable"); p != "" {
			out = append(out, p)
		}
	}
	return out
}
