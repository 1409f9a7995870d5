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

// mdEscape makes s literal Markdown inline text on one line: it backslash-escapes
// the ASCII punctuation that can start markup, and escapes a leading character
// that would make the line a heading, list, quote or thematic break.
func mdEscape(s string) string {
	s = strings.Join(strings.Fields(strings.NewReplacer("\r", " ", "\n", " ", "\t", " ").Replace(s)), " ")
	var b strings.Builder
	for i, c := range s {
		switch c {
		case '\\', '`', '*', '_', '[', ']', '<', '>', '|', '~', '&', '!':
			b.WriteByte('\\')
		case '#', '-', '+', '=':
			if i == 0 {
				b.WriteByte('\\')
			}
		}
		b.WriteRune(c)
	}
	out := b.String()
	// "1. text" or "1) text" would start an ordered list.
	if j := strings.IndexFunc(out, func(r rune) bool { return r < '0' || r > '9' }); j > 0 && j <= 9 &&
		(out[j] == '.' || out[j] == ')') {
		out = out[:j] + `\` + out[j:]
	}
	return out
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
		b.WriteString(mdEscape(c))
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
