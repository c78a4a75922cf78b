package runtime

import "net/http"

// The catalog routes (DESIGN K2–K4). Every config in their answers is in
// response form.

func (r *Runtime) handleCatalog(w http.ResponseWriter, req *http.Request) error {
	list, err := r.Catalog(req.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, list)
}
