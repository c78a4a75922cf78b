package runtime

import (
	"strings"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/tokenstore"
)

// warnOpenModes logs one warning, at start, when the state dir, the config
// file or a stored login is open to other users: they hold credentials, or
// (a writable directory) let another user swap them. Nothing is changed:
// the next save writes the file owner-only anyway, and the directory's
// mode is the user's to fix.
func (r *Runtime) warnOpenModes(file *config.File, tokens tokenstore.Store) {
	problems := r.store.OpenModes()
	if file != nil {
		names := make([]string, len(file.Servers))
		for i, s := range file.Servers {
			names[i] = s.Name
		}
		problems = append(problems, tokens.OpenModes(names)...)
	}
	if len(problems) == 0 {
		return
	}
	r.opts.Logger.Warn("state files are open to other users: "+strings.Join(problems, "; ")+
		"; the next save makes each file owner-only (0600), the directory is yours to fix (chmod 700)",
		"problems", len(problems))
}
