package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/tracefabric/tracefabric/analysis"
	"github.com/tracefabric/tracefabric/plots"
	"github.com/tracefabric/tracefabric/plots/report"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/records/export"
)

// job is one analysis to write: the runs, the one the details are about, its
// summary, and the comparison when there are several runs.
type job struct {
	ctx      context.Context // writing stops, with its error, once it is done
	inputs   []*runInput
	ref      int
	sum      *analysis.Summary
	cmp      *analysis.Comparison
	top      int
	progress *progress
	tables   export.Format // CSV (default) or Parquet
	// notDone: the points of a sweep (of one categorical axis) that --partial left
	// out of the comparison, and partial the sentence that says so.
	notDone []records.PointState
	partial string
}

// result is what writeOutputs wrote.
type result struct {
	figures     []string          // drawn, in report order
	noData      map[string]string // figure -> why it was not drawn
	noDataOrder []string
	tables      []string
	headline    []string
	warnings    []string
	summaryJSON []byte
}

// writeOutputs writes tables/*.csv (or *.parquet), plots/*.png|svg, report.html, report.md and, last,
// summary.json into the output directory's temporary path.
func writeOutputs(od *outputDir, j *job) (*result, error) {
	res := &result{noData: map[string]string{}, warnings: j.sum.Warnings}

	tables := j.sum.Tables()
	if j.cmp != nil {
		tables = append(tables, j.cmp.Table(), fctByRun(j.cmp))
	}
	j.progress.note("writing %d tables", len(tables))
	if err := os.Mkdir(od.path("tables"), 0o755); err != nil {
		return nil, err
	}
	if err := writeTables(od.path("tables"), tables, j.tables); err != nil {
		return nil, err
	}
	for _, t := range tables {
		res.tables = append(res.tables, t.Name)
	}

	if err := os.Mkdir(od.path(report.FigureDir), 0o755); err != nil {
		return nil, err
	}
	figs := &figures{drawn: map[string]report.Figure{}, noData: map[string]string{}}
	for _, spec := range figureSpecs(j) {
		if err := j.ctx.Err(); err != nil {
			return nil, err
		}
		j.progress.note("drawing %s", spec.name)
		fig, err := spec.draw()
		var nd *plots.NoDataError
		if errors.As(err, &nd) {
			figs.noData[spec.name] = nd.Reason
			res.noData[spec.name] = nd.Reason
			res.noDataOrder = append(res.noDataOrder, spec.name)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("figure %s: %w", spec.name, err)
		}
		files, err := fig.Save(od.path(report.FigureDir))
		if err != nil {
			return nil, fmt.Errorf("figure %s: %w", spec.name, err)
		}
		figs.drawn[spec.name] = report.Figure{Name: fig.Name, Title: fig.Title, Caption: fig.Note, PNG: files.PNGData}
	}

	res.headline = headline(j)
	rep := buildReport(j, figs, res.headline)
	retargetSources(rep, j.tables)
	res.figures = rep.Figures()
	for name := range figs.drawn {
		if !contains(res.figures, name) {
			return nil, fmt.Errorf("figure %s was drawn but the report does not show it", name)
		}
	}
	if err := j.ctx.Err(); err != nil {
		return nil, err
	}
	j.progress.note("writing the report")
	if err := rep.Save(od.d.Temp()); err != nil {
		return nil, err
	}

	sj := &summaryJSON{Summary: j.sum, Tool: "tracefabric analyze " + version, Headline: res.headline,
		Figures: res.figures, NoData: res.noData, Tables: res.tables}
	if sj.Figures == nil {
		sj.Figures = []string{}
	}
	for i, in := range j.inputs {
		name := in.run.Info.Method
		if j.cmp != nil {
			name = methodName(j.cmp, i)
		}
		sj.Runs = append(sj.Runs, runRef{Dir: in.dir, Method: name, Transport: in.run.Info.Transport})
	}
	if j.cmp != nil {
		sj.Reference = methodName(j.cmp, j.ref)
		sj.Comparison, sj.ComparisonInfo = comparisonJSON(j.cmp)
	}
	sj.NotDone = j.notDone
	data, err := marshalSummary(sj)
	if err != nil {
		return nil, fmt.Errorf("summary.json: %w", err)
	}
	if err := os.WriteFile(od.path(summaryFile), data, 0o644); err != nil {
		return nil, err
	}
	res.summaryJSON = data
	return res, nil
}

// fctByRun is the table fct_slowdown_by_run: every run's slowdown rows, by run name.
func fctByRun(c *analysis.Comparison) analysis.Table {
	rows := make([][]analysis.SlowdownRow, len(c.Methods))
	for i, m := range c.Methods {
		rows[i] = c.ByMethod[m].FCT.Rows
	}
	return analysis.SlowdownTable("fct_slowdown_by_run", c.Methods, rows)
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
