package report_test

import (
	"fmt"
	"os"

	"github.com/tracefabric/tracefabric/plots/report"
)

func ExampleReport_WriteMarkdown() {
	r := &report.Report{
		Title:    "tracefabric analysis",
		Headline: []string{"1,234 packets dropped, 12 lossless (headroom)."},
		Sections: []report.Section{
			{Title: "Drops", Blocks: []report.Block{
				report.KeyValueBlock("", report.KV{Key: "dropped packets", Value: "1,234"}),
				report.TableBlock(report.Table{
					Columns: []string{"node", "drops"},
					Rows:    [][]string{{"leaf|0", "1,000"}, {"spine1", "234"}},
				}),
				report.FigureBlock(report.Figure{Name: "drops_over_time", Title: "Drops over time"}),
			}},
			{Title: "PFC pauses", Blocks: []report.Block{
				report.NoDataBlock("No PFC pauses."),
			}},
		},
	}
	if err := r.WriteMarkdown(os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// # tracefabric analysis
	//
	// - **1,234 packets dropped, 12 lossless (headroom).**
	//
	// ## Drops
	//
	// | | |
	// | :--- | ---: |
	// | dropped packets | 1,234 |
	//
	// | node | drops |
	// | :--- | ---: |
	// | leaf\|0 | 1,000 |
	// | spine1 | 234 |
	//
	// ![Drops over time](plots/drops_over_time.png)
	//
	// *Drops over time*
	//
	// ## PFC pauses
	//
	// *No PFC pauses.*
}
