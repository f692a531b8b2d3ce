// Package bars draws a traffic Report's split as bars against the expected
// shares: for a terminal (WriteText: Unicode block bars, the observed share
// solid and the expected share shaded beneath it, ANSI colours only when
// asked) and as a self-contained SVG picture (WriteSVG: no fonts, styles or
// scripts from elsewhere), as `svclab traffic -o bars` and `-o svg` print
// them and the `svclab ui` page shows them.
//
// Both are pure functions of the Report, golden-tested on whole outputs
// (go test -update rewrites testdata/*.golden). Both draw on the same scale
// (Scale): from 0 to the smallest multiple of 10% that holds every observed
// and expected share, so the bars of a 3-way split are long enough to compare
// and a reader sees the scale's end written beside it.
package bars
