package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/tracefabric/tracefabric/analysis"
	"github.com/tracefabric/tracefabric/cmd/internal/cli"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/plots"
	"github.com/tracefabric/tracefabric/plots/report"
	"github.com/tracefabric/tracefabric/records"
)

// analyzeSweepDir handles a sweep directory (one argument holding sweep.json, as
// `replay sweep` writes it): a sweep of one categorical axis other than replicate (or
// of one point) is the comparison of its points' runs, as for `replay run --hash all`, written into
// DIR/analysis (handled is false: o.dirs and o.defaultOut are set for the usual path); any
// other sweep gets the sweep report (handled is true, err its result).
func analyzeSweepDir(o *options) (handled bool, err error) {
	if len(o.dirs) != 1 {
		return false, nil
	}
	dir := o.dirs[0]
	if _, err := os.Stat(filepath.Join(dir, records.SweepFile)); err != nil {
		return false, nil
	}
	sw, err := records.ReadSweep(dir)
	if err != nil {
		return true, inputError{Err: err}
	}
	var varying []*records.SweepAxis
	for i := range sw.Axes {
		if len(sw.Axes[i].Values) > 1 {
			varying = append(varying, &sw.Axes[i])
		}
	}
	sw.Scan(dir)
	switch {
	case !sw.Complete && !o.opt.Partial:
		return true, inputError{Err: analysis.IncompleteSweep(dir, sw)}
	case sw.Counts[records.StatusDone] == 0:
		return true, inputError{Err: fmt.Errorf("%w: %s: none of its %d points is done (replay sweep --status %s says why)",
			analysis.ErrSweepIncomplete, dir, len(sw.Points), dir)}
	}
	// A replicate axis changes the flows themselves (the copies'), which a
	// comparison's paired bootstrap cannot pair: even as categories ("3,1", "2") it
	// gets the sweep report.
	if len(varying) == 0 || len(varying) == 1 && !varying[0].IsNumeric() && varying[0].Name != "replicate" {
		o.dirs = nil
		for _, p := range sw.Points {
			if p.Status == records.StatusDone {
				o.dirs = append(o.dirs, filepath.Join(dir, p.Dir))
			}
		}
		if o.notDone = sw.States(true); len(o.notDone) > 0 {
			o.partial = analysis.PartialSentence(dir, sw.Axes, len(o.dirs), o.notDone)
		}
		o.defaultOut = filepath.Join(dir, records.AnalysisDir)
		return false, nil
	}
	return true, analyzeSweep(o, dir)
}

// notDoneTable lists the points a partial analysis left out, with their settings,
// status and reason.
func notDoneTable(axes []records.SweepAxis, nd []records.PointState) report.Table {
	t := report.Table{Caption: "Points not analyzed (not done: replay sweep --status lists them)", Columns: []string{"point", "settings", "status", "why"}}
	for _, p := range nd {
		var set []string
		for i, a := range axes {
			set = append(set, a.Name+"="+p.Values[i])
		}
		t.Rows = append(t.Rows, []string{p.Dir, strings.Join(set, ", "), string(p.Status), firstNonEmpty(p.Detail, "-")})
	}
	return t
}

// sweepSummaryJSON is summary.json of a sweep: the headline, what was written, and
// the sweep's points, metrics, series and answers.
type sweepSummaryJSON struct {
	Tool     string                 `json:"tool"`
	Headline []string               `json:"headline"`
	Figures  []string               `json:"figures"`
	NoData   map[string]string      `json:"no_data"`
	Tables   []string               `json:"tables"`
	Sweep    *analysis.SweepSummary `json:"sweep"`
}

// analyzeSweep writes the sweep report of dir.
func analyzeSweep(o *options, dir string) error {
	out := o.out
	if out == "" {
		out = filepath.Join(dir, records.AnalysisDir)
	}
	if err := checkReplaceable(filepath.Clean(out)); err != nil {
		return inputError{Err: err}
	}
	if err := checkSameInputs(filepath.Clean(out), []string{dir}, o.force); err != nil {
		return inputError{Err: err}
	}
	ctx := o.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	pg := newProgress(o.stderr, o.quiet || o.asJSON)
	defer pg.done()
	opt := o.opt
	opt.Progress = pg.stageFunc(dir)
	s, err := interruptible(ctx, func() (*analysis.SweepSummary, error) { return analysis.AnalyzeSweep(ctx, dir, opt) })
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		if errors.Is(err, analysis.ErrSweepIncomplete) || errors.Is(err, records.ErrNotSweepDir) {
			return inputError{Err: err}
		}
		return classifyInput(err)
	}
	var res []byte
	var sj *sweepSummaryJSON
	od, err := writeAnalysis(out, o.out != "", func(od *outputDir) (err error) {
		res, sj, err = writeSweep(ctx, od, s, o)
		return err
	})
	if err != nil {
		return err
	}
	pg.done()
	if o.asJSON {
		_, err := o.stdout.Write(res)
		return err
	}
	fmt.Fprintf(o.stdout, "wrote %s: report.html, report.md, summary.json, %s (plots/sweep_*.png, *.svg), tables/sweep.%s\n", od.d.Final(),
		cli.Plural(int64(len(sj.Figures)), "figure"), o.tables)
	if len(sj.NoData) > 0 {
		var parts []string
		for _, m := range s.Metrics {
			if why, ok := sj.NoData[plots.NameSweepPrefix+m.Name]; ok {
				parts = append(parts, plots.NameSweepPrefix+m.Name+" ("+why+")")
			}
		}
		fmt.Fprintf(o.stdout, "  not drawn: %s\n", strings.Join(parts, ", "))
	}
	for _, h := range s.Headline {
		fmt.Fprintf(o.stdout, "  %s\n", h)
	}
	return nil
}

// writeSweep writes the sweep's table, figures, report and (last) summary.json into
// the output directory's temporary path, and returns summary.json.
func writeSweep(ctx context.Context, od *outputDir, s *analysis.SweepSummary, o *options) ([]byte, *sweepSummaryJSON, error) {
	sj := &sweepSummaryJSON{Tool: "tracefabric analyze " + version, Headline: s.Headline, NoData: map[string]string{},
		Figures: []string{}, Sweep: s}
	if err := os.Mkdir(od.path("tables"), 0o755); err != nil {
		return nil, nil, err
	}
	tables := []analysis.Table{s.Table()}
	if err := writeTables(od.path("tables"), tables, o.tables); err != nil {
		return nil, nil, err
	}
	sj.Tables = append(sj.Tables, tables[0].Name)
	if err := os.Mkdir(od.path(report.FigureDir), 0o755); err != nil {
		return nil, nil, err
	}
	var figBlocks []report.Block
	for _, m := range s.Metrics {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		if allZero(s, m.Name) { // a flat line at 0 says nothing the table does not
			sj.NoData[plots.NameSweepPrefix+m.Name] = "0 at every point"
			continue
		}
		fig, err := plots.Sweep(sweepFigure(s, m), plots.Options{})
		var nd *plots.NoDataError
		if errors.As(err, &nd) {
			sj.NoData[nd.Figure] = nd.Reason
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		files, err := fig.Save(od.path(report.FigureDir))
		if err != nil {
			return nil, nil, err
		}
		sj.Figures = append(sj.Figures, fig.Name)
		caption := m.Title + " (" + m.Source + ")"
		if m.Note != "" {
			caption += ": " + m.Note
		}
		figBlocks = append(figBlocks, report.FigureBlock(report.Figure{Name: fig.Name, Title: fig.Title, Caption: caption, PNG: files.PNGData}))
	}
	rep := sweepReport(s, figBlocks, sj.NoData)
	if err := rep.Save(od.d.Temp()); err != nil {
		return nil, nil, err
	}
	data, err := json.MarshalIndent(sj, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	data = append(data, '\n')
	return data, sj, os.WriteFile(od.path(summaryFile), data, 0o644)
}

// allZero reports whether metric is 0 (or undefined) at every point of s.
func allZero(s *analysis.SweepSummary, metric string) bool {
	for _, p := range s.Points {
		if v := p.Metrics[metric]; v != nil && *v != 0 {
			return false
		}
	}
	return true
}

// sweepFigure is the figure model of one metric: a panel per axis the series use.
func sweepFigure(s *analysis.SweepSummary, m analysis.SweepMetric) plots.SweepMetric {
	fm := plots.SweepMetric{Name: m.Name, Title: m.Title, Unit: m.Unit}
	panel := map[string]int{}
	for _, ser := range s.Series {
		if ser.Metric != m.Name {
			continue
		}
		i, ok := panel[ser.Axis]
		if !ok {
			i = len(fm.Panels)
			panel[ser.Axis] = i
			pn := plots.SweepPanel{Axis: ser.Axis, LineAxes: ser.LineAxes}
			for _, a := range s.Axes {
				if a.Name != ser.Axis {
					continue
				}
				for _, v := range a.Values {
					pn.Labels = append(pn.Labels, v)
				}
				if a.IsNumeric() {
					pn.X = append(pn.X, a.Numeric...)
				} else {
					for k := range a.Values {
						pn.X = append(pn.X, float64(k))
					}
				}
			}
			fm.Panels = append(fm.Panels, pn)
		}
		l := plots.SweepLine{X: ser.X, Values: ser.LineValues}
		for _, y := range ser.Y {
			if y == nil {
				l.Y = append(l.Y, math.NaN())
			} else {
				l.Y = append(l.Y, *y)
			}
		}
		fm.Panels[i].Lines = append(fm.Panels[i].Lines, l)
	}
	return fm
}

// pointsTable is every point with its metrics, formatted for reading (the CSV
// holds the exact values).
func pointsTable(s *analysis.SweepSummary) report.Table {
	t := report.Table{Caption: "every point", Columns: []string{"point"}, Source: "tables/sweep.csv"}
	for _, a := range s.Axes {
		t.Columns = append(t.Columns, a.Name)
	}
	for _, m := range s.Metrics {
		t.Columns = append(t.Columns, m.Title)
	}
	for _, p := range s.Points {
		row := append([]string{p.Dir}, p.Values...)
		for _, m := range s.Metrics {
			v := p.Metrics[m.Name]
			switch {
			case v == nil:
				row = append(row, "-")
			case m.Unit == "ps":
				row = append(row, units.FormatPs(*v))
			case *v == math.Trunc(*v) && math.Abs(*v) < 1e15:
				row = append(row, units.FormatCount(int64(*v)))
			default:
				row = append(row, fmt.Sprintf("%.3g", *v))
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// sweepReport is the report of a sweep: the answers, the points' table, a figure
// per metric.
func sweepReport(s *analysis.SweepSummary, figs []report.Block, noData map[string]string) *report.Report {
	var axes []string
	for _, a := range s.Axes {
		axes = append(axes, fmt.Sprintf("%s (%s)", a.Name, strings.Join(a.Values, ", ")))
	}
	title := fmt.Sprintf("Sweep of %s", cli.Plural(int64(len(s.Points)), "point"))
	if len(s.NotDone) > 0 {
		title = fmt.Sprintf("Sweep: %d of %s analyzed", len(s.Points), cli.Plural(int64(len(s.Points)+len(s.NotDone)), "point"))
	}
	rep := &report.Report{
		Title:    title,
		Subtitle: s.Dir,
		Headline: s.Headline,
	}
	intro := report.ParagraphBlock("Each point is one replay of the trace with the settings below (its run directory under " +
		s.Dir + "). Drops, lossless drops, PFC frames and CE marks come from each point's run.json; PFC paused time, storms, " +
		"max/mean member load per tier and polarization from the analysis of its records; FCT slowdowns (fct_ps / ideal_fct_ps " +
		"of the completed flows) from flows.arrow. Axes: " + strings.Join(axes, "; ") + ".")
	ans := report.Table{Columns: []string{"question", "other axes", "answer", "point"}}
	for _, a := range s.Answers {
		v, pt := "none", ""
		if a.Value != "" {
			v = a.Value
			if len(a.Again) > 0 {
				v += " (but not at " + strings.Join(a.Again, ", ") + ")"
			}
			pt = records.PointDir(*a.Point)
		}
		var kv []string
		for i, name := range a.LineAxes {
			kv = append(kv, name+"="+a.LineValues[i])
		}
		line := strings.Join(kv, ", ")
		if line == "" {
			line = "-"
		}
		ans.Rows = append(ans.Rows, []string{a.Question, line, v, pt})
	}
	sec := report.Section{Title: "Sweep", Blocks: []report.Block{intro}}
	if len(s.NotDone) > 0 {
		sec.Blocks = append(sec.Blocks, report.TableBlock(notDoneTable(s.Axes, s.NotDone)))
	}
	if len(ans.Rows) > 0 {
		sec.Blocks = append(sec.Blocks, report.TableBlock(ans))
	}
	sec.Blocks = append(sec.Blocks, report.TableBlock(pointsTable(s)))
	rep.Sections = append(rep.Sections, sec)
	figSec := report.Section{Title: "Metrics against the axes", Blocks: figs}
	if len(figs) == 0 {
		figSec.Blocks = []report.Block{report.NoDataBlock("No figure: no metric has a value other than 0.")}
	}
	if len(noData) > 0 {
		var names []string
		for _, m := range s.Metrics {
			if why, ok := noData[plots.NameSweepPrefix+m.Name]; ok {
				names = append(names, m.Title+" ("+why+")")
			}
		}
		figSec.Blocks = append(figSec.Blocks, report.ParagraphBlock("Not drawn: "+strings.Join(names, ", ")+"; the table of every point above holds them."))
	}
	rep.Sections = append(rep.Sections, figSec)
	return rep
}
