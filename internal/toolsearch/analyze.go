package toolsearch

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

// analyzer turns text into index terms: identifiers are split into words
// (snake_case, camelCase, kebab-case, dotted.names, digits apart from
// letters), words are lowercased, stop words dropped, the rest stemmed
// with the Snowball English stemmer. One analyzer belongs to one Build
// (or one query) and memoises its stems; it is not shared.
type analyzer struct {
	stems map[string]string
}

func newAnalyzer() *analyzer { return &analyzer{stems: map[string]string{}} }

// terms appends the terms of text to dst, at most max of them.
func (a *analyzer) terms(dst []string, text string, max int) []string {
	n := 0
	for w := range words(text) {
		if n >= max {
			break
		}
		if t := a.term(w); t != "" {
			dst = append(dst, t)
			n++
		}
	}
	return dst
}

// term is the index term of one lowercased word, "" for a stop word or a
// lone letter.
func (a *analyzer) term(w string) string {
	if s, ok := a.stems[w]; ok {
		return s
	}
	s := ""
	switch {
	case len(w) == 1 && !isDigit(rune(w[0])):
	case english.IsStopWord(w) || conversational(w):
	default:
		s = english.Stem(w, false)
	}
	if len(a.stems) < maxMemo {
		a.stems[w] = s
	}
	return s
}

// maxMemo bounds the stem memo of one analyzer (a vocabulary of a few
// thousand words is typical for a thousand tools).
const maxMemo = 1 << 16

// maxWordBytes bounds one word: longer runs (a base64 blob in a
// description) are not words anyone searches for.
const maxWordBytes = 64

// conversational reports the words of a request that say nothing about
// which tool answers it ("please", "I want to", "could you"), beyond the
// Snowball stop list.
func conversational(w string) bool {
	switch w {
	case "please", "want", "wanna", "need", "let", "could", "would", "may", "might", "must", "shall",
		"also", "maybe", "something", "anything", "thing", "things", "someone", "somehow", "kind", "way",
		"tell", "give", "just", "really", "actually", "quickly", "hey", "hi", "thanks", "thank", "ok", "okay",
		"sure", "able", "possible", "wonder", "wondering", "try":
		return true
	}
	return false
}

// words yields the lowercased words of text: runs of letters and digits,
// split further at case changes (fooBar, HTTPServer) and at letter/digit
// boundaries (base64 → base 64).
func words(text string) func(yield func(string) bool) {
	return func(yield func(string) bool) {
		start := -1
		var prev rune
		emit := func(end int) bool {
			if start < 0 {
				return true
			}
			w := text[start:end]
			start = -1
			if r, _ := utf8.DecodeRuneInString(w); isCJK(r) {
				return bigrams(w, yield)
			}
			if len(w) > maxWordBytes {
				return true
			}
			return yield(strings.ToLower(w))
		}
		for i, r := range text {
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				if !emit(i) {
					return
				}
				prev = r
				continue
			}
			if start >= 0 && boundary(prev, r, text[i+utf8.RuneLen(r):]) {
				if !emit(i) {
					return
				}
			}
			if start < 0 {
				start = i
			}
			prev = r
		}
		emit(len(text))
	}
}

// boundary reports whether a word ends between prev and r (rest is the text
// after r): into or out of a run of CJK characters, lower→Upper, the last capital of an acronym before a lowercase
// letter (HTTPServer → HTTP Server), letters→digits and digits→letters.
func boundary(prev, r rune, rest string) bool {
	switch {
	case isCJK(prev) != isCJK(r):
		return true
	case unicode.IsLower(prev) && unicode.IsUpper(r):
		return true
	case unicode.IsUpper(prev) && unicode.IsUpper(r):
		next, _ := utf8.DecodeRuneInString(rest)
		return unicode.IsLower(next)
	case unicode.IsLetter(prev) && unicode.IsDigit(r), unicode.IsDigit(prev) && unicode.IsLetter(r):
		return true
	}
	return false
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

// isCJK reports the characters of the scripts written without spaces
// between words (Chinese, Japanese) and Korean's.
func isCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// bigrams yields the overlapping pairs of characters of a run of CJK
// characters (the run itself when it is one character): the analyser
// knows no words of these scripts, and pairs are what a query of a
// two-character word matches. No run is too long: each pair is a word.
func bigrams(run string, yield func(string) bool) bool {
	if _, n := utf8.DecodeRuneInString(run); n == len(run) {
		return yield(run)
	}
	for i := 0; i < len(run); {
		_, a := utf8.DecodeRuneInString(run[i:])
		if i+a >= len(run) {
			break
		}
		_, b := utf8.DecodeRuneInString(run[i+a:])
		if !yield(run[i : i+a+b]) {
			return false
		}
		i += a
	}
	return true
}
