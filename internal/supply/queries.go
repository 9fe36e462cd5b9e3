package supply

import (
	"math/rand/v2"
	"strings"
)

// streamQueries seeds the workload draws (query words, typos).
const streamQueries uint64 = 100

// workloadRand returns the source of a workload drawn with seed.
func workloadRand(seed uint64) (*rand.Rand, *rand.Zipf, []string) {
	vocab := Vocabulary()
	r := rand.New(rand.NewPCG(seed, splitmix(streamQueries)))
	return r, rand.NewZipf(r, 1.1, 2, uint64(len(vocab)-1)), vocab
}

// Words draws n title words with the frequencies titles have: the search
// terms of a full-text search workload.
func Words(seed uint64, n int) []string {
	_, z, vocab := workloadRand(seed)
	out := make([]string, n)
	for i := range out {
		out[i] = vocab[z.Uint64()]
	}
	return out
}

// Queries draws n descriptive queries of three distinct title words, each
// drawn with the frequencies titles have. Three such words rarely share one
// Record: these are the queries of partial-match search.
func Queries(seed uint64, n int) []string {
	_, z, vocab := workloadRand(seed)
	out := make([]string, n)
	for i := range out {
		words := make([]string, 0, 3)
		for len(words) < 3 {
			w := vocab[z.Uint64()]
			dup := false
			for _, x := range words {
				dup = dup || x == w
			}
			if !dup {
				words = append(words, w)
			}
		}
		out[i] = strings.Join(words, " ")
	}
	return out
}

// Typo is a title word and a misspelling of it.
type Typo struct {
	Word       string
	Misspelled string
}

// Typos draws n title words of at least five letters (with the frequencies
// titles have) and misspells each: the queries of typo-tolerant search.
func Typos(seed uint64, n int) []Typo {
	_, z, vocab := workloadRand(seed)
	out := make([]Typo, 0, n)
	for len(out) < n {
		w := vocab[z.Uint64()]
		if len(w) < 5 {
			continue
		}
		if m, ok := Misspell(w); ok {
			out = append(out, Typo{Word: w, Misspelled: m})
		}
	}
	return out
}

// Misspell swaps two adjacent letters in the middle of a word (never the
// first or the last letter), nearest the middle first. It reports false,
// and returns the word unchanged, when no such swap changes the word (words
// of fewer than four letters, or with a middle of one repeated letter).
func Misspell(word string) (string, bool) {
	b := []byte(word)
	n := len(b)
	if n < 4 {
		return word, false
	}
	// Pairs (i, i+1) with 1 ≤ i and i+1 ≤ n-2, from the middle outwards.
	mid := (n - 1) / 2
	for d := 0; d < n; d++ {
		for _, i := range []int{mid - d, mid + d} {
			if i < 1 || i+1 > n-2 || b[i] == b[i+1] {
				continue
			}
			b[i], b[i+1] = b[i+1], b[i]
			return string(b), true
		}
	}
	return word, false
}
