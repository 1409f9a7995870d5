package plots_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/plots"
	"github.com/tracefabric/tracefabric/plots/report"
)

func ExampleDropsOverTime() {
	dir, _ := os.MkdirTemp("", "plots")
	defer os.RemoveAll(dir)

	bins := plots.DropBins{
		Start:    0,
		BinWidth: 100 * units.Microsecond,
		Reasons: []plots.ReasonCounts{
			{Reason: "headroom", Counts: []float64{0, 2, 5, 1, 0}},
			{Reason: "egress-limit", Counts: []float64{3, 9, 12, 4, 1}},
		},
	}
	fig, err := plots.DropsOverTime(bins, plots.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	files, err := fig.Save(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(fig.Title)
	fmt.Println(fig.Note)
	fmt.Println(filepath.Base(files.PNG), filepath.Base(files.SVG))
	// Output:
	// Drops over time by reason
	// 37 dropped packets, stacked by reason; bin = 100 us
	// drops_over_time.png drops_over_time.svg
}

// A figure without data is not drawn: the error says why, for the report.
func ExampleNoDataError() {
	_, err := plots.PFCPauseTimeline(plots.PauseGrid{BinWidth: units.Millisecond}, plots.Options{})
	var nd *plots.NoDataError
	if errors.As(err, &nd) {
		fmt.Println(errors.Is(err, plots.ErrNoData), nd.Figure, "-", nd.Reason)
	}
	// Output:
	// true pfc_pause_timeline - no PFC pauses
}

// Figures go into OUT/plots, and the report embeds (HTML) or links (Markdown)
// them; a figure without data becomes a note.
func Example_report() {
	out, _ := os.MkdirTemp("", "analyze")
	defer os.RemoveAll(out)
	figDir := filepath.Join(out, report.FigureDir)
	os.Mkdir(figDir, 0o755)

	section := report.Section{Title: "Drops"}
	fig, err := plots.DropsOverTime(plots.DropBins{BinWidth: units.Millisecond,
		Reasons: []plots.ReasonCounts{{Reason: "pool-full", Counts: []float64{4, 1}}}}, plots.Options{})
	var nd *plots.NoDataError
	switch {
	case errors.As(err, &nd):
		section.Blocks = append(section.Blocks, report.NoDataBlock("No drops."))
	case err != nil:
		fmt.Println(err)
		return
	default:
		files, err := fig.Save(figDir)
		if err != nil {
			fmt.Println(err)
			return
		}
		section.Blocks = append(section.Blocks, report.FigureBlock(report.Figure{
			Name: fig.Name, Title: fig.Title, Caption: fig.Note, PNG: files.PNGData}))
	}
	_, err = plots.PFCPauseTimeline(plots.PauseGrid{BinWidth: units.Millisecond}, plots.Options{})
	pfc := report.Section{Title: "PFC pauses"}
	if errors.As(err, &nd) {
		pfc.Blocks = append(pfc.Blocks, report.NoDataBlock("No PFC pauses."))
	}
	r := &report.Report{Title: "Analysis", Headline: []string{"5 packets dropped."},
		Sections: []report.Section{section, pfc}}
	if err := r.Save(out); err != nil {
		fmt.Println(err)
		return
	}
	for _, name := range []string{"report.html", "report.md", "plots/drops_over_time.png", "plots/drops_over_time.svg"} {
		_, err := os.Stat(filepath.Join(out, name))
		fmt.Println(name, err == nil)
	}
	// Output:
	// report.html true
	// report.md true
	// plots/drops_over_time.png true
	// plots/drops_over_time.svg true
}
