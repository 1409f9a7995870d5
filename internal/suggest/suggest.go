package suggest

import "strings"

// Nearest returns the known word closest to word and true when it is close enough
// to suggest (see the package documentation); ties go to the first in known.
func Nearest(word string, known []string) (string, bool) {
	best, bestD := "", -1
	lw := strings.ToLower(word)
	for _, k := range known {
		d := Distance(lw, strings.ToLower(k))
		if bestD < 0 || d < bestD {
			best, bestD = k, d
		}
	}
	if bestD < 0 {
		return "", false
	}
	return best, bestD <= max(1, len([]rune(word))/3)
}

// Distance is the optimal-string-alignment distance between a and b (case-sensitive):
// insertions, deletions, substitutions and transpositions of adjacent letters each
// cost one.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
