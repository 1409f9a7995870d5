// Package suggest finds the known word a mistyped one most likely meant, for the
// "did you mean X?" of error messages (configuration attributes, filter words).
//
// Distance is the optimal-string-alignment edit distance, case-insensitive:
// insertions, deletions, substitutions and transpositions of adjacent letters each
// cost one. A known word is suggested only when it is close for the typed word's
// length: at most max(1, len/3) edits (a letter wrong in a 3-letter word, two in a
// 6-letter one), or the same word in another case. "Foo" is two edits from "Xon"
// but shares nothing with it, so nothing is suggested for it.
package suggest
