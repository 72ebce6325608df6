package coord

import (
	"strings"
	"unicode/utf8"

	"github.com/wukongim/wkcore/go/internal/status"
)

// Shared-subscription topics, "$share/{group}/{filter}": each message of
// filter goes to one member of group, which is how the replicas of one
// service consume a stream once between them. An ACL check of such a
// subscription must match its real filter (SharedTopic.Filter, ACLFilter),
// never the whole string: a rule "uplink/#" does not cover
// "$share/workers/uplink/#", so checking the full string refuses every
// member of the group, and nothing reports why.
//
// The rules are the C ABI's (wk_share_topic_build, wk_share_topic_split),
// and these functions are the same pure Go code in both builds; the cgo
// build's tests compare their answers with the library's. A topic whose
// first level is exactly "$share" is a shared subscription and must be
// "$share/{group}/{filter}": the group at least one byte with none of '/',
// '+', '#' or U+0000; the filter a topic filter (not empty, '+' and '#'
// only as whole levels, '#' only last, no U+0000) that is not itself
// shared. Any other topic is a plain filter under the same filter rules.
// Every string is UTF-8, and a topic is at most ShareTopicMax bytes.

// ShareTopicMax is the longest topic, shared or plain, in bytes (an MQTT
// string's limit).
const ShareTopicMax = 65535

// sharePrefix starts every shared-subscription topic.
const sharePrefix = "$share/"

// The codes of the shared-subscription statuses.
const (
	codeInvalidShareGroup  status.Code = 404
	codeInvalidTopicFilter status.Code = 405
)

// The shared-subscription errors. Each matches ErrInvalidArgument too.
var (
	// ErrInvalidShareGroup: a share group that is empty, not UTF-8, or holds
	// '/', '+', '#' or U+0000 ("$share", "$share/", "$share//f").
	ErrInvalidShareGroup error = errInvalidShareGroup
	// ErrInvalidTopicFilter: a filter (or a whole topic) that is missing
	// ("$share/g", "$share/g/"), empty, not UTF-8, malformed (a wildcard that
	// is not a whole level, '#' before the last level, U+0000), itself a
	// shared subscription, or longer than ShareTopicMax bytes.
	ErrInvalidTopicFilter error = errInvalidTopicFilter
)

var (
	errInvalidShareGroup  = status.New(codeInvalidShareGroup, "coord: invalid share group", status.ErrInvalidArgument)
	errInvalidTopicFilter = status.New(codeInvalidTopicFilter, "coord: invalid topic filter", status.ErrInvalidArgument)
)

func init() {
	status.Register(errInvalidShareGroup, errInvalidTopicFilter)
}

// SharedTopic is a subscription topic split for ACL matching. Group and
// Filter are substrings of the topic given to SplitShareTopic.
type SharedTopic struct {
	// Shared is true for "$share/{group}/{filter}".
	Shared bool
	// Group is the share group, "" for a plain filter.
	Group string
	// Filter is the real topic filter, what an ACL must match: the whole
	// topic for a plain filter.
	Filter string
}

// checkShareGroup checks a share group.
func checkShareGroup(group string) error {
	if group == "" || !utf8.ValidString(group) || strings.ContainsAny(group, "/+#\x00") {
		return errInvalidShareGroup
	}
	return nil
}

// checkTopicFilter checks a filter to be matched as is.
func checkTopicFilter(filter string) error {
	if filter == "" || !utf8.ValidString(filter) {
		return errInvalidTopicFilter
	}
	first := true
	for rest := filter; ; {
		level, tail, more := strings.Cut(rest, "/")
		if first && level == "$share" {
			return errInvalidTopicFilter
		}
		first = false
		switch level {
		case "+":
		case "#":
			if more {
				return errInvalidTopicFilter
			}
		default:
			if strings.ContainsAny(level, "+#\x00") {
				return errInvalidTopicFilter
			}
		}
		if !more {
			return nil
		}
		rest = tail
	}
}

// BuildShareTopic returns "$share/{group}/{filter}". A malformed group
// gives ErrInvalidShareGroup (checked first); a malformed filter, or a
// topic beyond ShareTopicMax bytes, ErrInvalidTopicFilter. What it builds,
// SplitShareTopic splits back into group and filter.
func BuildShareTopic(group, filter string) (string, error) {
	if err := checkShareGroup(group); err != nil {
		return "", err
	}
	if err := checkTopicFilter(filter); err != nil {
		return "", err
	}
	if len(sharePrefix)+len(group)+1+len(filter) > ShareTopicMax {
		return "", errInvalidTopicFilter
	}
	return sharePrefix + group + "/" + filter, nil
}

// SplitShareTopic splits a subscription topic into its share group and the
// real filter, both substrings of topic (nothing is copied). A plain filter
// comes back whole, with Shared false. Malformed forms are refused:
// "$share", "$share/" and "$share//f" (ErrInvalidShareGroup), "$share/g" and
// "$share/g/" (ErrInvalidTopicFilter), and any group or filter that breaks
// its rules.
func SplitShareTopic(topic string) (SharedTopic, error) {
	if len(topic) > ShareTopicMax || !utf8.ValidString(topic) {
		return SharedTopic{}, errInvalidTopicFilter
	}
	first, rest, _ := strings.Cut(topic, "/")
	if first != "$share" {
		if err := checkTopicFilter(topic); err != nil {
			return SharedTopic{}, err
		}
		return SharedTopic{Filter: topic}, nil
	}
	group, filter, _ := strings.Cut(rest, "/")
	if err := checkShareGroup(group); err != nil {
		return SharedTopic{}, err
	}
	if err := checkTopicFilter(filter); err != nil {
		return SharedTopic{}, err
	}
	return SharedTopic{Shared: true, Group: group, Filter: filter}, nil
}

// ACLFilter returns the filter an ACL must match for subscription topic:
// the real filter of a shared subscription, the topic itself otherwise.
func ACLFilter(topic string) (string, error) {
	s, err := SplitShareTopic(topic)
	if err != nil {
		return "", err
	}
	return s.Filter, nil
}
