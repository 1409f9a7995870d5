package report

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
)

// WriteHTML writes the report as one self-contained HTML page: CSS inline, PNG
// figures embedded as data URIs, no scripts and no external resources, so it
// opens offline. Text is escaped by html/template. Every figure needs PNG data.
func (r *Report) WriteHTML(w io.Writer) error {
	if err := r.Validate(true); err != nil {
		return err
	}
	return write(w, func(buf *bytes.Buffer) error {
		if err := htmlTemplate.Execute(buf, r.view(true)); err != nil {
			return fmt.Errorf("report: rendering HTML: %w", err)
		}
		return nil
	})
}

// view is the report prepared for the templates.
type view struct {
	*Report
	Sections []sectionView
}

type sectionView struct {
	ID, Title string
	Blocks    []blockView
}

type blockView struct {
	Block
	Aligns  []string     // per table column: "l" or "r"
	DataURI template.URL // figure PNG as data URI (HTML only)
	Path    string       // figure PNG path relative to the report
}

func (r *Report) view(html bool) view {
	v := view{Report: r}
	ids := r.sectionIDs()
	for i, s := range r.Sections {
		sv := sectionView{ID: ids[i], Title: s.Title}
		for _, b := range s.Blocks {
			bv := blockView{Block: b}
			if t := b.Table; t != nil {
				bv.Aligns = make([]string, len(t.Columns))
				for c := range t.Columns {
					a := AlignDefault
					if c < len(t.Align) {
						a = t.Align[c]
					}
					if a == AlignRight || (a == AlignDefault && numericColumn(t.Rows, c)) {
						bv.Aligns[c] = "r"
					} else {
						bv.Aligns[c] = "l"
					}
				}
			}
			if f := b.Figure; f != nil {
				bv.Path = FigureDir + "/" + f.Name + ".png"
				if html {
					// Safe: the validated PNG bytes, base64 encoded.
					bv.DataURI = template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(f.PNG))
				}
			}
			sv.Blocks = append(sv.Blocks, bv)
		}
		v.Sections = append(v.Sections, sv)
	}
	return v
}

var htmlTemplate = template.Must(template.New("report.html").Funcs(template.FuncMap{
	"cell": func(aligns []string, i int) string { return aligns[i] },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: -apple-system, "Segoe UI", "Liberation Sans", Helvetica, Arial, sans-serif;
  color: #222; background: #fff; max-width: 70em; margin: 2em auto; padding: 0 1.5em; line-height: 1.45; }
h1 { font-size: 1.7em; margin-bottom: 0.1em; }
h2 { font-size: 1.3em; margin-top: 2em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; }
.subtitle { color: #555; margin-top: 0; }
.headline { background: #f4f7fb; border-left: 4px solid #374a6d; padding: 0.6em 1.2em; margin: 1.2em 0; }
.headline ul { margin: 0.3em 0; padding-left: 1.2em; }
.headline li { margin: 0.25em 0; font-size: 1.05em; }
nav ol { columns: 2; padding-left: 1.4em; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.92em; }
caption { text-align: left; font-weight: bold; padding-bottom: 0.3em; }
th, td { border: 1px solid #d8d8d8; padding: 0.25em 0.7em; vertical-align: top; }
th { background: #f2f2f2; }
tbody tr:nth-child(even) { background: #fafafa; }
td.r, th.r { text-align: right; font-variant-numeric: tabular-nums; }
td.l, th.l { text-align: left; }
table.kv th { text-align: left; font-weight: normal; color: #444; }
table.kv td { text-align: right; font-variant-numeric: tabular-nums; }
.tablenote { color: #555; font-size: 0.88em; margin-top: -0.4em; }
figure { margin: 1.2em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #444; font-size: 0.92em; }
.nodata { color: #555; font-style: italic; background: #f7f7f7; padding: 0.5em 1em; border-radius: 4px; }
code { font-size: 0.95em; }
@media print { body { max-width: none; } h2 { break-after: avoid; } figure { break-inside: avoid; } }
</style>
</head>
<body>
<header>
<h1>{{.Title}}</h1>
{{- with .Subtitle}}
<p class="subtitle">{{.}}</p>
{{- end}}
</header>
{{- with .Headline}}
<section class="headline" aria-label="headline">
<ul>
{{- range .}}
<li>{{.}}</li>
{{- end}}
</ul>
</section>
{{- end}}
{{- if gt (len .Sections) 1}}
<nav aria-label="contents">
<ol>
{{- range .Sections}}
<li><a href="#{{.ID}}">{{.Title}}</a></li>
{{- end}}
</ol>
</nav>
{{- end}}
{{- range .Sections}}
<section id="{{.ID}}">
<h2>{{.Title}}</h2>
{{- range .Blocks}}
{{- if .Paragraph}}
<p>{{.Paragraph}}</p>
{{- else if .NoData}}
<p class="nodata">{{.NoData}}</p>
{{- else if .KeyValues}}
<table class="kv">
{{- with .KeyValues.Caption}}
<caption>{{.}}</caption>
{{- end}}
<tbody>
{{- range .KeyValues.Pairs}}
<tr><th scope="row">{{.Key}}</th><td>{{.Value}}</td></tr>
{{- end}}
</tbody>
</table>
{{- else if .Table}}
{{- $aligns := .Aligns}}
<table>
{{- with .Table.Caption}}
<caption>{{.}}</caption>
{{- end}}
<thead><tr>
{{- range $i, $c := .Table.Columns}}<th class="{{cell $aligns $i}}" scope="col">{{$c}}</th>{{end -}}
</tr></thead>
<tbody>
{{- range .Table.Rows}}
<tr>{{range $i, $c := .}}<td class="{{cell $aligns $i}}">{{$c}}</td>{{end}}</tr>
{{- end}}
</tbody>
</table>
{{- if or .Table.Note .Table.Source}}
<p class="tablenote">{{.Table.Note}}{{if and .Table.Note .Table.Source}}; {{end}}{{with .Table.Source}}full table: <code>{{.}}</code>{{end}}</p>
{{- end}}
{{- else if .Figure}}
<figure id="fig-{{.Figure.Name}}">
<img src="{{.DataURI}}" alt="{{.Figure.Title}}">
<figcaption><strong>{{.Figure.Title}}</strong>{{with .Figure.Caption}}. {{.}}{{end}} (<code>{{.Path}}</code>)</figcaption>
</figure>
{{- end}}
{{- end}}
</section>
{{- end}}
</body>
</html>
`))
