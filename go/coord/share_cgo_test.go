//go:build cgo && !wkcore_purego

package coord

import (
	"errors"
	"testing"
)

// The Go functions (the same code in both builds) answer as the library
// does, for every input of the tables: valid, malformed and edge.
func TestShareMatchesLibrary(t *testing.T) {
	for _, c := range shareTopics {
		goS, goErr := SplitShareTopic(c.topic)
		cS, cErr := librarySplitShareTopic(c.topic)
		if goErr != cErr || goS != cS {
			t.Errorf("split %.40q: Go %+v, %v; library %+v, %v", c.topic, goS, goErr, cS, cErr)
		}
	}
	for _, c := range shareBuilds {
		goT, goErr := BuildShareTopic(c.group, c.filter)
		cT, cErr := libraryBuildShareTopic(c.group, c.filter)
		if goErr != cErr || goT != cT {
			t.Errorf("build %q, %.40q: Go %.40q, %v; library %.40q, %v", c.group, c.filter, goT, goErr, cT, cErr)
		}
	}
	// Every pair of parts of the split table rebuilt, both ways.
	for _, c := range shareTopics {
		s, err := SplitShareTopic(c.topic)
		if err != nil || !s.Shared {
			continue
		}
		goT, goErr := BuildShareTopic(s.Group, s.Filter)
		cT, cErr := libraryBuildShareTopic(s.Group, s.Filter)
		if goErr != nil || cErr != nil || goT != c.topic || cT != c.topic {
			t.Errorf("rebuild %q: Go %q, %v; library %q, %v", c.topic, goT, goErr, cT, cErr)
		}
	}
	if _, err := libraryBuildShareTopic("", "f"); !errors.Is(err, ErrInvalidShareGroup) {
		t.Errorf("library error %v is not the Go sentinel", err)
	}
}
