package embed

import (
	"context"
	"hash/fnv"
	"strings"
	"unicode"
)

// Hash is the built-in embedder: feature hashing of the text's words
// (lower-cased runs of letters and digits) and of each word's character
// trigrams (with a space before and after the word), each feature added
// with a sign taken from its hash, the result scaled to unit length.
// Texts sharing words or word parts get similar vectors; the same text
// always gets the same vector. It knows nothing of meaning beyond
// spelling: synonyms are unrelated.
type Hash struct{}

// Weights of the two feature families: a shared word counts more than a
// shared trigram.
const (
	wordWeight    = 1.0
	trigramWeight = 0.5
)

// Embed implements Embedder.
func (Hash) Embed(_ context.Context, texts []string, dims int) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = HashVector(t, dims)
	}
	return out, nil
}

// HashVector is the hash embedding of one text: nil when the text has no
// word.
func HashVector(text string, dims int) []float32 {
	if dims < 1 {
		return nil
	}
	v := make([]float32, dims)
	any := false
	for _, w := range words(text) {
		any = true
		add(v, "w\x00"+w, wordWeight)
		r := []rune(" " + w + " ")
		for j := 0; j+3 <= len(r); j++ {
			add(v, "t\x00"+string(r[j:j+3]), trigramWeight)
		}
	}
	if !any || !Unit(v) {
		return nil
	}
	return v
}

// add adds weight w to the dimension feature f hashes to, with the sign
// of the hash's top bit.
func add(v []float32, f string, w float32) {
	h := fnv.New64a()
	_, _ = h.Write([]byte(f))
	x := h.Sum64()
	i := (x & (1<<63 - 1)) % uint64(len(v))
	if x>>63 == 1 {
		w = -w
	}
	v[i] += w
}

// words are the lower-cased runs of letters and digits of s.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}
