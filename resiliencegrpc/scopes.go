package resiliencegrpc

import (
	"maps"
	"slices"
	"strings"

	"github.com/resilience4go/resilience4go/internal/r4c"
)

// scopes holds rules by what they apply to: a method, a service, or every method.
type scopes[R any] struct {
	methods  map[string]R
	services map[string]R
	all      R
	hasAll   bool
}

func (sc *scopes[R]) add(s *Server, rule R, methods []string, bad bool) {
	if bad {
		s.fail(r4c.Errorf(r4c.BadSpec, "resiliencegrpc", "", "a Limit needs a limiter and a Guard a registry, not nil"))
		return
	}
	if len(methods) == 0 {
		if sc.hasAll {
			s.fail(r4c.Errorf(r4c.BadSpec, "resiliencegrpc", "", "two rules of one kind apply to every method"))
		}
		sc.all, sc.hasAll = rule, true
		return
	}
	for _, m := range methods {
		if !validScope(m) || m == "" {
			s.fail(badMethod(m))
			continue
		}
		into := &sc.methods
		if strings.HasSuffix(m, "/") {
			into = &sc.services
		}
		if *into == nil {
			*into = map[string]R{}
		}
		if prev, dup := (*into)[m]; dup {
			if any(prev) == any(rule) {
				s.fail(r4c.Errorf(r4c.BadSpec, "resiliencegrpc", m, "%s is listed twice", m))
			} else {
				s.fail(r4c.Errorf(r4c.BadSpec, "resiliencegrpc", m, "two rules of one kind apply to %s", m))
			}
		}
		(*into)[m] = rule
	}
}

// of returns the most specific rule for method, or the zero R.
func (sc *scopes[R]) of(method string) R {
	if r, ok := sc.methods[method]; ok {
		return r
	}
	if len(sc.services) > 0 {
		if r, ok := sc.services[service(method)]; ok {
			return r
		}
	}
	return sc.all
}

// rules returns each distinct rule once.
func (sc *scopes[R]) rules() []R {
	var out []R
	seen := map[any]bool{}
	add := func(r R) {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	if sc.hasAll {
		add(sc.all)
	}
	for _, m := range slices.Sorted(maps.Keys(sc.services)) {
		add(sc.services[m])
	}
	for _, m := range slices.Sorted(maps.Keys(sc.methods)) {
		add(sc.methods[m])
	}
	return out
}

// service returns the service part of a full method name, with its slashes:
// "/pkg.Service/" for "/pkg.Service/Method".
func service(method string) string {
	if i := strings.LastIndexByte(method, '/'); i > 0 {
		return method[:i+1]
	}
	return ""
}

// validScope reports whether m is "/service/method" or "/service/".
func validScope(m string) bool {
	if len(m) < 3 || m[0] != '/' {
		return false
	}
	svc, meth, ok := strings.Cut(m[1:], "/")
	return ok && svc != "" && !strings.Contains(meth, "/")
}

func badMethod(m string) error {
	return r4c.Errorf(r4c.BadSpec, "resiliencegrpc.method", m,
		`a method is named "/package.Service/Method", a whole service "/package.Service/"`)
}
