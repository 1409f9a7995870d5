package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/template"
)

// WriteMarkdown writes the report as Markdown (CommonMark with GitHub tables).
// Figures are linked as plots/NAME.png; text is escaped so that names such as
// "<script>" or "a|b" print literally and cannot break a table.
func (r *Report) WriteMarkdown(w io.Writer) error {
	if err := r.Validate(false); err != nil {
		return err
	}
	return write(w, func(buf *bytes.Buffer) error {
		if err := markdownTemplate.Execute(buf, r.view(false)); err != nil {
			return fmt.Errorf("report: rendering Markdown: %w", err)
		}
		return nil
	})
}

// mdEscape makes s literal Markdown text at the start of a line (a paragraph, a
// heading's text, a caption): the inline escapes of mdInline, plus a backslash before
// a leading character that would make the line a heading, list item, quote or
// thematic break ("# x", "- x", "> x", "12. x"), and only then: "49.3 MB" and
// "10.0.3.5" start no list and print as they are.
func mdEscape(s string) string {
	out := mdInline(s)
	if out == "" {
		return out
	}
	switch out[0] {
	case '#', '-', '+', '=', '>':
		return `\` + out
	}
	// "1. text", "1) text" or a lone "1." starts an ordered list: up to 9 digits, then
	// '.' or ')', then a space or the end of the line.
	if j := strings.IndexFunc(out, func(r rune) bool { return r < '0' || r > '9' }); j > 0 && j <= 9 &&
		(out[j] == '.' || out[j] == ')') && (j+1 == len(out) || out[j+1] == ' ') {
		out = out[:j] + `\` + out[j:]
	}
	return out
}

// mdInline makes s literal Markdown inline text on one line: whitespace runs become
// one space, and the ASCII punctuation that can start inline markup (emphasis, code,
// links, raw HTML, entities, strikethrough) or end a table cell ('|') gets a
// backslash. Table cells use it as it is: a cell's content is inline, so block
// markers at its start ("- ", "1. ", "#") mean nothing there.
func mdInline(s string) string {
	s = strings.Join(strings.Fields(strings.NewReplacer("\r", " ", "\n", " ", "\t", " ").Replace(s)), " ")
	var b strings.Builder
	for _, c := range s {
		switch c {
		case '\\', '`', '*', '_', '[', ']', '<', '|', '~', '&':
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func mdAlignRow(aligns []string) string {
	var b strings.Builder
	b.WriteString("|")
	for _, a := range aligns {
		if a == "r" {
			b.WriteString(" ---: |")
		} else {
			b.WriteString(" :--- |")
		}
	}
	return b.String()
}

func mdRow(cells []string) string {
	var b strings.Builder
	b.WriteString("|")
	for _, c := range cells {
		b.WriteString(" ")
		b.WriteString(mdInline(c))
		b.WriteString(" |")
	}
	return b.String()
}

var markdownTemplate = template.Must(template.New("report.md").Funcs(template.FuncMap{
	"md":       mdEscape,
	"row":      mdRow,
	"alignrow": mdAlignRow,
	"kvrow":    func(kv KV) string { return mdRow([]string{kv.Key, kv.Value}) },
}).Parse(`# {{md .Title}}
{{with .Subtitle}}
{{md .}}
{{end}}
{{- with .Headline}}
{{range .}}- **{{md .}}**
{{end}}
{{- end}}
{{- range .Sections}}
## {{md .Title}}
{{range .Blocks}}
{{- if .Paragraph}}
{{md .Paragraph}}
{{else if .NoData}}
*{{md .NoData}}*
{{else if .KeyValues}}
{{with .KeyValues.Caption}}**{{md .}}**

{{end -}}
| | |
| :--- | ---: |
{{range .KeyValues.Pairs}}{{kvrow .}}
{{end}}
{{- else if .Table}}
{{with .Table.Caption}}**{{md .}}**

{{end -}}
{{row .Table.Columns}}
{{alignrow .Aligns}}
{{range .Table.Rows}}{{row .}}
{{end}}
{{- if or .Table.Note .Table.Source}}
{{md .Table.Note}}{{if and .Table.Note .Table.Source}}; {{end}}{{with .Table.Source}}full table: ` + "`{{.}}`" + `{{end}}
{{end}}
{{- else if .Figure}}
![{{md .Figure.Title}}]({{.Path}})

*{{md .Figure.Title}}*{{with .Figure.Caption}}: {{md .}}{{end}}
{{end}}
{{- end}}
{{- end}}`))
