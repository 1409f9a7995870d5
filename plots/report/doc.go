// Package report renders an analysis report from a small model: a title, headline
// sentences, and sections of paragraphs, key-value tables, data tables, figures
// and "no data" notes.
//
// WriteHTML makes report.html: one self-contained page (inline CSS, PNG figures
// embedded as base64 data URIs, no scripts, no external fonts, styles or images),
// so it opens offline and can be mailed as one file. WriteMarkdown makes report.md,
// linking each figure as plots/NAME.png (FigureDir), where package plots saves it.
// Save writes both atomically (temporary name, then rename).
//
// All model text is plain text: html/template escapes it for HTML, and the
// Markdown renderer backslash-escapes the characters that start inline markup
// (and '|'), so node names or reasons taken from records ("<script>", "a|b")
// print literally. Block markers ("# ", "- ", "1. ") are escaped only at the
// start of a line, never inside table cells, so "10.0.3.5" and "49.3 MB" stay
// as they are. Numbers are
// formatted by the caller; the report adds no units. Rendering is deterministic.
package report
