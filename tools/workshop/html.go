package workshop

import (
	"html/template"
	"io"
	"time"
)

// The HTML pages are self-contained: inline style, inline SVG, no script,
// no external asset; they open offline from a file. Every name is made
// printable (p) before html/template escapes it, so that the page read in a
// terminal (cat, less -r) commands it no more than the text output does.
const pageStyle = `body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left}
.pass{background:#e3f6e3}.fail{background:#fbe5e5}.none{color:#888}
.bar{background:#eee;width:20em;height:1em}.bar div{background:#4a7;height:1em}
figure{margin:1em 0}figure svg{max-width:100%;height:auto}`

var reportPage = template.Must(template.New("report").Funcs(template.FuncMap{
	"percent":  func(a, b int) int { return 100 * a / max(b, 1) },
	"duration": func(s int64) string { return (time.Duration(s) * time.Second).String() },
	"utc":      func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"p":        printable,
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{{p .R.Student}} — {{p .R.Lesson}}</title>
<style>` + pageStyle + `</style></head>
<body>
<h1>{{p .R.Title}}</h1>
<p>Student <b>{{p .R.Student}}</b> · lesson <code>{{p .R.Lesson}}</code>{{with .R.Seed}} · seed {{p .}}{{end}} · lab <code>{{p .R.Lab}}</code>{{with .R.CNI}} ({{p .}}){{end}} · started {{utc .R.Started}}</p>
<h2>Steps</h2>
<p>{{.R.StepsDone}} of {{.R.StepsTotal}} steps done</p>
<div class="bar"><div style="width:{{percent .R.StepsDone .R.StepsTotal}}%"></div></div>
<h2>Exercises: {{.R.Passed}} of {{len .R.Exercises}} passed</h2>
<table>
<tr><th>exercise</th><th>result</th><th>attempts</th><th>passed after</th></tr>
{{- range .R.Exercises}}
<tr class="{{if .Passed}}pass{{else if .Attempts}}fail{{else}}none{{end}}"><td>{{p .Name}}</td><td>{{if .Passed}}✓ passed{{else if .Attempts}}✗ not yet{{else}}· not tried{{end}}</td><td>{{.Attempts}}</td><td>{{if .Passed}}{{duration .Seconds}}{{end}}</td></tr>
{{- end}}
</table>
{{- if .Picture}}
<h2>The lab</h2>
<figure>{{.Picture}}</figure>
{{- end}}
</body></html>
`))

// WriteHTML writes the report as a self-contained HTML page; picture is
// the lab's topology as inline SVG (labs/netns/graph), or empty.
func (r Report) WriteHTML(w io.Writer, picture string) error {
	return reportPage.Execute(w, struct {
		R       Report
		Picture template.HTML
	}{r, template.HTML(picture)}) //nolint:gosec // the SVG is svclab's own rendering (labs/netns/graph escapes every name)
}

var classPage = template.Must(template.New("class").Funcs(template.FuncMap{
	"cell": classCell,
	"p":    printable,
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>svclab workshop — the class</title>
<style>` + pageStyle + `</style></head>
<body>
<h1>The class</h1>
<p>{{len .Rows}} {{if eq (len .Rows) 1}}report{{else}}reports{{end}}. ✓ N: passed at the N-th attempt · ✗ N: N attempts, not passed yet · ·: not tried.</p>
<table>
<tr><th>student</th><th>lesson</th><th>steps</th>{{range .Exercises}}<th>{{p .Exercise}}</th>{{end}}</tr>
{{- range .Rows}}
<tr><td>{{p .Student}}</td><td>{{p .Lesson}}</td><td>{{.StepsDone}}/{{.Steps}}</td>{{range .Cells}}<td class="{{if not .}}{{else if .Passed}}pass{{else if .Attempts}}fail{{else}}none{{end}}">{{cell .}}</td>{{end}}</tr>
{{- end}}
</table>
</body></html>
`))

// WriteHTML writes the class table as a self-contained HTML page.
func (c Class) WriteHTML(w io.Writer) error { return classPage.Execute(w, c) }
