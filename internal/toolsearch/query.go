package toolsearch

import (
	"strings"
	"unicode"
)

// queryTerm is one term of a query with its weight: 1 for a word the user
// typed, synonymWeight for one inferred from what they typed.
type queryTerm struct {
	term   string
	weight float64
}

// queryTerms analyses a query: its distinct terms (the first MaxQueryTerms),
// and the terms its file names and web addresses imply.
func queryTerms(a *analyzer, query string) []queryTerm {
	var out []queryTerm
	has := func(t string) bool {
		for _, q := range out {
			if q.term == t {
				return true
			}
		}
		return false
	}
	for w := range words(query) {
		if t := a.term(w); t != "" && !has(t) {
			out = append(out, queryTerm{t, 1})
			if len(out) == MaxQueryTerms {
				return out
			}
		}
	}
	for _, w := range strings.Fields(query) {
		for h := range strings.FieldsSeq(nameHint(w)) {
			if hint := a.term(h); hint != "" && !has(hint) && len(out) < MaxQueryTerms {
				out = append(out, queryTerm{hint, synonymWeight})
			}
		}
	}
	return out
}

// nameHint is what a word of a query names when its form says so (words
// separated by spaces), "" when it does not: a file name (notes.txt,
// src/main.go) is about a file, and an image's, a recording's or a
// video's (photo.jpg) about an image, audio or video file too; a host
// name (example.com) is about a web page. People name what they mean
// this way rather than saying "the file".
func nameHint(w string) string {
	w = strings.TrimFunc(w, func(r rune) bool { return unicode.IsPunct(r) && r != '/' && r != '_' })
	dot := strings.LastIndexByte(w, '.')
	if base := w[strings.LastIndexByte(w, '/')+1:]; dot < 0 || strings.IndexByte(base, '.') < 2 || strings.Contains(w, "://") {
		return "" // no extension, or no name before it (.bashrc, e.g.)
	}
	ext := strings.ToLower(w[dot+1:])
	if len(ext) == 0 || len(ext) > 5 || ext[0] < 'a' || ext[0] > 'z' || strings.IndexFunc(ext, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) >= 0 {
		return ""
	}
	switch ext {
	case "com", "org", "net", "io", "dev", "app", "ai", "co", "edu", "gov":
		return "web"
	case "png", "jpg", "jpeg", "gif", "webp", "bmp", "svg", "tif", "tiff", "heic", "ico":
		return "file image"
	case "mp3", "wav", "ogg", "flac", "m4a", "aac", "opus":
		return "file audio"
	case "mp4", "mov", "avi", "mkv", "webm":
		return "file video"
	}
	return "file"
}
