package toolsearch

import (
	"slices"
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
// the words its phrases stand for ("logged in" for login), the compounds
// its pairs of words spell that known reports the index knows ("drop
// down" for dropdown), and the terms its file names and web addresses
// imply.
func queryTerms(a *analyzer, query string, phrases []phrase, known func(string) bool) []queryTerm {
	var out []queryTerm
	has := func(t string) bool {
		for _, q := range out {
			if q.term == t {
				return true
			}
		}
		return false
	}
	add := func(t string, weight float64) {
		if t != "" && !has(t) && len(out) < MaxQueryTerms {
			out = append(out, queryTerm{t, weight})
		}
	}
	var ws []string
	for w := range words(query) {
		ws = append(ws, w)
	}
	prev := "" // the word before, "" after a phrase
	for i := 0; i < len(ws); i++ {
		if word, n := phraseAt(phrases, ws[i:]); n > 0 {
			add(a.term(word), 1)
			i += n - 1
			prev = ""
			continue
		}
		t := a.term(ws[i])
		add(t, 1)
		// Stop words too: "drop down", "sign up", "look up".
		if len(prev) > 1 && len(ws[i]) > 1 {
			if c := a.term(prev + ws[i]); c != "" && c != t && known(c) {
				add(c, synonymWeight)
			}
		}
		prev = ws[i]
	}
	for _, w := range strings.Fields(query) {
		for h := range strings.FieldsSeq(nameHint(w)) {
			add(a.term(h), synonymWeight)
		}
	}
	return out
}

// asksForFacts reports whether query is a question about how things are
// ("what files are here", "when was it modified", "are there errors",
// "how big is it", "do you know"), which a tool that reads answers,
// rather than a request to do something (a polite "can you delete it",
// a "how do I" asking for a way).
func asksForFacts(query string) bool {
	var first, second string
	for w := range words(query) {
		if first == "" {
			first = w
			continue
		}
		second = w
		break
	}
	switch first {
	case "what", "which", "who", "whose", "where", "when", "why", "is", "are", "was", "were", "has", "have", "any":
		return true
	case "how":
		switch second {
		case "much", "many", "big", "large", "long", "old", "often", "far":
			return true
		}
	case "do", "does", "did":
		switch second {
		case "you", "i", "we", "they", "it", "he", "she", "the", "this", "that", "my", "any":
			return true
		}
	}
	// A "?" makes a question of what is not plainly one, but not of a
	// polite request ("can you delete it?", "please remove the file?")
	// nor of one asking for a way ("how do I delete a file?").
	return !asksToDo(first, second) && strings.HasSuffix(strings.TrimSpace(query), "?")
}

// asksToDo reports whether a query whose first two words are first and
// second opens a request: "can you", "could", "would", "will", "please",
// "how do I", "how can I", "how to".
func asksToDo(first, second string) bool {
	switch first {
	case "can", "could", "would", "will", "please":
		return true
	case "how":
		switch second {
		case "do", "can", "could", "should", "would", "to":
			return true
		}
	}
	return false
}

// phraseAt reports the word that the phrase of phrases ws starts with
// stands for and how many words the phrase has, 0 when ws starts with none.
func phraseAt(phrases []phrase, ws []string) (string, int) {
	for _, p := range phrases {
		if len(p.words) <= len(ws) && slices.Equal(p.words, ws[:len(p.words)]) {
			return p.word, len(p.words)
		}
	}
	return "", 0
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
