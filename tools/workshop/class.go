package workshop

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// Bounds of the class table, so that no set of reports makes it (or the
// memory that renders it) grow past a few tens of MiB: the reports read
// (each at most MaxReportBytes), the columns (a lesson's exercises, over
// every lesson of the class) and the cells (rows × columns: every row has a
// cell in every column).
const (
	MaxClassReports = 10_000
	MaxClassColumns = 200
	MaxClassCells   = 500_000
)

// Class is many students' reports at a glance: one row per student and
// lesson, one column per exercise of a lesson (every exercise any report
// names).
type Class struct {
	Exercises []ClassColumn
	Rows      []ClassRow
}

// ClassColumn is one exercise of one lesson.
type ClassColumn struct{ Lesson, Exercise string }

// ClassRow is one student on one lesson.
type ClassRow struct {
	Student, Lesson  string
	StepsDone, Steps int
	Passed           int
	// Cells are per column; nil where the lesson has no such exercise.
	Cells []*ExerciseReport
}

// NewClass aggregates reports, rows sorted by lesson then student,
// columns grouped by lesson. A
// student's later report for the same lesson replaces an earlier one.
func NewClass(reports []Report) Class {
	var c Class
	col := map[ClassColumn]int{}
	for _, r := range reports {
		for _, e := range r.Exercises {
			k := ClassColumn{r.Lesson, e.Name}
			if _, ok := col[k]; !ok {
				col[k] = len(c.Exercises)
				c.Exercises = append(c.Exercises, k)
			}
		}
	}
	// Columns grouped by lesson, each lesson's exercises in their order.
	slices.SortStableFunc(c.Exercises, func(a, b ClassColumn) int { return strings.Compare(a.Lesson, b.Lesson) })
	for i, k := range c.Exercises {
		col[k] = i
	}
	byKey := map[[2]string]int{}
	for _, r := range reports {
		row := ClassRow{Student: r.Student, Lesson: r.Lesson, StepsDone: r.StepsDone, Steps: r.StepsTotal, Passed: r.Passed, Cells: make([]*ExerciseReport, len(c.Exercises))}
		for _, e := range r.Exercises {
			row.Cells[col[ClassColumn{r.Lesson, e.Name}]] = &e
		}
		k := [2]string{r.Lesson, r.Student}
		if i, ok := byKey[k]; ok {
			c.Rows[i] = row
			continue
		}
		byKey[k] = len(c.Rows)
		c.Rows = append(c.Rows, row)
	}
	slices.SortStableFunc(c.Rows, func(a, b ClassRow) int {
		return strings.Compare(a.Lesson+"\x00"+a.Student, b.Lesson+"\x00"+b.Student)
	})
	return c
}

// WriteText writes the class as a table: students × exercises, each cell
// ✓ (passed, with attempts), ✗ (tried, not passed) or · (not tried). Names
// are made printable (a tab or a control character in one would shift the
// table or command the terminal).
func (c Class) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprint(tw, "STUDENT\tLESSON\tSTEPS")
	for _, e := range c.Exercises {
		fmt.Fprintf(tw, "\t%s", printable(e.Exercise))
	}
	fmt.Fprintln(tw)
	for _, r := range c.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%d/%d", printable(r.Student), printable(r.Lesson), r.StepsDone, r.Steps)
		for _, cell := range r.Cells {
			fmt.Fprintf(tw, "\t%s", classCell(cell))
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprint(tw, "PASSED\t\t")
	for i := range c.Exercises {
		fmt.Fprintf(tw, "\t%d/%d", c.passedIn(i), c.triedIn(i))
	}
	fmt.Fprintln(tw)
	return tw.Flush()
}

// classCell is one cell: "✓ 2" (passed at the 2nd attempt), "✗ 3", "·", or
// "" where the lesson has no such exercise.
func classCell(e *ExerciseReport) string {
	switch {
	case e == nil:
		return ""
	case e.Passed:
		return fmt.Sprintf("✓ %d", e.Attempts)
	case e.Attempts > 0:
		return fmt.Sprintf("✗ %d", e.Attempts)
	}
	return "·"
}

func (c Class) passedIn(col int) int {
	n := 0
	for _, r := range c.Rows {
		if e := r.Cells[col]; e != nil && e.Passed {
			n++
		}
	}
	return n
}

// triedIn counts the rows of the column's lesson.
func (c Class) triedIn(col int) int {
	n := 0
	for _, r := range c.Rows {
		if r.Cells[col] != nil {
			n++
		}
	}
	return n
}
