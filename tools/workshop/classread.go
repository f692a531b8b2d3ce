package workshop

import (
	"fmt"
	"slices"
)

// ClassLessons are the lessons `workshop class` checks reports against.
type ClassLessons struct {
	// Dir is the folder they were read from (errors name it).
	Dir     string
	Lessons []*Lesson
}

// ReadClass reads the reports at paths into a Class. Each is checked as
// ReadReport does and, when lessons is not nil, against the lesson it
// names: one of lessons, every exercise one that lesson declares (without
// lessons an exercise is checked as a name only). At most MaxClassReports
// reports, and a class of at most MaxClassColumns columns and
// MaxClassCells cells. The first problem is the error, naming the report's
// file and field; nothing is written before every report is read.
func ReadClass(paths []string, lessons *ClassLessons) (Class, error) {
	if len(paths) > MaxClassReports {
		return Class{}, fmt.Errorf("workshop class: %d reports: at most %d", len(paths), MaxClassReports)
	}
	reps := make([]Report, 0, len(paths))
	columns := map[ClassColumn]bool{}
	rows := map[[2]string]bool{}
	for _, path := range paths {
		r, err := ReadReport(path)
		if err != nil {
			return Class{}, err
		}
		src := printable(path)
		if lessons != nil {
			if err := lessons.check(src, &r); err != nil {
				return Class{}, err
			}
		}
		for _, e := range r.Exercises {
			columns[ClassColumn{r.Lesson, e.Name}] = true
		}
		if len(columns) > MaxClassColumns {
			return Class{}, reportErr(src, "exercises", "", "the class would have %d columns (a lesson's exercises, over every lesson), at most %d: give the reports of fewer lessons at once", len(columns), MaxClassColumns)
		}
		rows[[2]string{r.Lesson, r.Student}] = true
		if cells := len(rows) * len(columns); cells > MaxClassCells {
			return Class{}, reportErr(src, "", "", "the class would have %d rows × %d columns, over %d cells: give the reports of fewer lessons at once", len(rows), len(columns), MaxClassCells)
		}
		reps = append(reps, r)
	}
	return NewClass(reps), nil
}

// check checks r against the lesson it names.
func (cl *ClassLessons) check(src string, r *Report) error {
	i := slices.IndexFunc(cl.Lessons, func(l *Lesson) bool { return l.Metadata.Name == r.Lesson })
	if i < 0 {
		var names []string
		for _, l := range cl.Lessons {
			names = append(names, l.Metadata.Name)
		}
		return reportErr(src, "lesson", r.Lesson, "no such lesson in %s (it has %s)", printable(cl.Dir), orNone(names))
	}
	return r.checkDeclared(src, cl.Lessons[i])
}
