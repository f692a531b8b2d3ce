package trace

import (
	"bytes"

	"github.com/svclab/svclab/internal/labstore"
)

// SaveLast keeps r as the lab's last trace (labstore.LastTraceJSON and
// LastTraceSVG in the lab's store), for the classroom page.
func SaveLast(st *labstore.Store, r *Result) error {
	var j, s bytes.Buffer
	if err := WriteJSON(&j, r); err != nil {
		return err
	}
	if err := WriteSVG(&s, r); err != nil {
		return err
	}
	return st.WriteLastTrace(j.Bytes(), s.Bytes())
}
