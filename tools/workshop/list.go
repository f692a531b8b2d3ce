package workshop

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/svclab/svclab/labs/netns"
	"github.com/svclab/svclab/labs/netns/graph"
	"github.com/svclab/svclab/tools/builtin"
)

// LessonsDir is where the lessons are when --lessons does not say: the
// checkout's clusters/lessons at or above the working directory, so that a
// lesson's author runs the lesson as edited, else the lessons built into
// svclab (tools/builtin), so that the binary alone has them anywhere.
func LessonsDir() (string, error) {
	if dir, ok := CheckoutLessonsDir(); ok {
		return dir, nil
	}
	dir, err := builtin.Dir()
	if err != nil {
		return "", fmt.Errorf("workshop: the built-in lessons: %w (or give --lessons DIR)", err)
	}
	return filepath.Join(dir, "lessons"), nil
}

// CheckoutLessonsDir finds clusters/lessons in the svclab checkout at or
// above the working directory.
func CheckoutLessonsDir() (string, bool) {
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for d := dir; ; d = filepath.Dir(d) {
		p := filepath.Join(d, "clusters", "lessons")
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return p, true
		}
		if d == filepath.Dir(d) {
			return "", false
		}
	}
}

// ListLessons loads every lesson in dir (one folder each), sorted by name;
// a broken lesson is an error naming its file and field.
func ListLessons(dir string) ([]*Lesson, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []*Lesson
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		l, err := Load(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

// FindLesson loads the lesson named name in dir, or the lesson folder at
// the path name when it contains a slash.
func FindLesson(dir, name string) (*Lesson, error) {
	if strings.Contains(name, "/") {
		return Load(name)
	}
	if err := checkLabel("", "LESSON", name); err != nil {
		return nil, fmt.Errorf("lesson %q: not a lesson name (svclab workshop list lists them)", name)
	}
	p := filepath.Join(dir, name)
	if _, err := os.Stat(filepath.Join(p, FileName)); err != nil {
		return nil, fmt.Errorf("lesson %q: not found in %s (svclab workshop list lists them)", name, dir)
	}
	return Load(p)
}

// LessonSummary is a lesson as `workshop list -o json` shows it.
type LessonSummary struct {
	Name      string `json:"name"`
	Title     string `json:"title"`
	Seed      string `json:"seed,omitempty"`
	Minutes   int    `json:"minutes,omitempty"`
	Steps     int    `json:"steps"`
	Exercises int    `json:"exercises"`
	CNI       string `json:"cni,omitempty"`
}

// Summaries are the lessons' summaries.
func Summaries(ls []*Lesson) []LessonSummary {
	out := []LessonSummary{}
	for _, l := range ls {
		out = append(out, LessonSummary{Name: l.Metadata.Name, Title: l.Spec.Title, Seed: l.Spec.Seed, Minutes: l.Spec.Minutes, Steps: len(l.Spec.Steps), Exercises: len(l.Spec.Exercises), CNI: l.Spec.CNI})
	}
	return out
}

// WriteList writes the lessons as a table or (format "json") JSON.
func WriteList(w io.Writer, ls []LessonSummary, format string) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(ls)
	case "", "text":
	default:
		return fmt.Errorf("-o %q: want text or json", format)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSEED\tMINUTES\tSTEPS\tEXERCISES\tTITLE")
	for _, l := range ls {
		seed := l.Seed
		if seed == "" {
			seed = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\n", l.Name, seed, l.Minutes, l.Steps, l.Exercises, l.Title)
	}
	return tw.Flush()
}

// LabPicture draws the lab's topology as SVG (labs/netns/graph), for the HTML
// report.
func LabPicture(lab *netns.Lab) (string, error) {
	objs, _, err := lab.Store.ReadObjects()
	if err != nil {
		return "", err
	}
	g, err := graph.FromStore(lab.Topology, objs)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := graph.WriteSVG(&b, g); err != nil {
		return "", err
	}
	// Inline in HTML, the SVG element stands alone: no XML declaration.
	svg := b.String()
	if i := strings.Index(svg, "<svg"); i > 0 {
		svg = svg[i:]
	}
	return svg, nil
}
