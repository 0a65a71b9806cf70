package fiojob

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"unicode"
)

// line is one option line of a job file, includes expanded.
type line struct {
	text  string
	where string // FILE:LINE
}

// section is a [NAME] section with its option lines.
type section struct {
	name, where string
	lines       []line
}

// maxIncludeDepth stops a chain of includes long before any real job file
// needs it; loops are caught by name before that.
const maxIncludeDepth = 32

// jobFile parses the job file at path. Jobs start from global, which the
// file's [global] sections change for the jobs after them; with stonewall
// the file's first job waits for every job before it.
func (p *parser) jobFile(path string, global opts, stonewall bool) error {
	data, err := p.readFile(path)
	if err != nil {
		return fmt.Errorf("reading job file: %w", err)
	}
	var sections []section
	var cur *section
	for n, raw := range splitLines(data) {
		where := fmt.Sprintf("%s:%d", path, n+1)
		text := cleanLine(raw)
		if strings.ContainsFunc(text, isControl) {
			return notText(where, text)
		}
		switch {
		case text == "":
		case text[0] == '[':
			name, ok := sectionName(text)
			if !ok {
				return fmt.Errorf("%s: malformed section header %q (want [NAME])", where, text)
			}
			sections = append(sections, section{name: name, where: where})
			cur = &sections[len(sections)-1]
		case cur == nil:
			return fmt.Errorf("%s: %q is outside any [section]", where, text)
		case isInclude(text):
			if err := p.include(text, where, []string{path}, &cur.lines); err != nil {
				return err
			}
		default:
			cur.lines = append(cur.lines, line{text: text, where: where})
		}
	}
	for _, s := range sections {
		if strings.HasPrefix(s.name, "global") { // fio takes any [global...] as global
			given, err := p.applyLines(&global, s.lines)
			if err != nil {
				return err
			}
			p.plan.GlobalOptions = append(p.plan.GlobalOptions, given...)
			continue
		}
		job := pending{o: global.clone(), where: s.where}
		job.o.name = s.name
		job.o.stonewall = job.o.stonewall || stonewall
		stonewall = false
		if job.options, err = p.applyLines(&job.o, s.lines); err != nil {
			return err
		}
		p.pending = append(p.pending, job)
	}
	return nil
}

// splitLines splits a job file into lines, without the byte order mark some
// editors write first.
func splitLines(data []byte) []string {
	return strings.Split(strings.TrimPrefix(string(data), "\ufeff"), "\n")
}

// cleanLine strips blanks and comments as fio does: ';' or '#' anywhere
// starts a comment, so neither can appear in a value.
func cleanLine(s string) string {
	if i := strings.IndexAny(s, ";#"); i >= 0 {
		s = s[:i]
	}
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f })
}

// isControl is a character no option of a job file holds: errors show
// the line as it is, which a carriage return or a line feed would break.
func isControl(r rune) bool { return r != '\t' && unicode.IsControl(r) }

func notText(where, text string) error {
	return fmt.Errorf("%s: %q holds a control character", where, text)
}

func sectionName(text string) (string, bool) {
	if len(text) < 3 || text[len(text)-1] != ']' {
		return "", false
	}
	name := strings.TrimSpace(text[1 : len(text)-1])
	return name, name != "" && !strings.ContainsAny(name, "[]")
}

func isInclude(text string) bool {
	rest, ok := strings.CutPrefix(text, "include")
	return ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t')
}

// include adds the option lines of the file an "include FILE" line names
// to lines. As in fio, FILE is looked up as given first and then next to
// the including file; it holds options only. stack is the chain of files
// including it, to catch loops.
func (p *parser) include(text, where string, stack []string, lines *[]line) error {
	name := strings.TrimSpace(strings.TrimPrefix(text, "include"))
	from := stack[len(stack)-1]
	if len(stack) > maxIncludeDepth {
		return fmt.Errorf("%s: include %s: more than %d nested includes", where, name, maxIncludeDepth)
	}
	path := name
	data, err := p.readFile(path)
	if errors.Is(err, fs.ErrNotExist) && !filepath.IsAbs(name) && filepath.Dir(from) != "." {
		path = filepath.Join(filepath.Dir(from), name)
		data, err = p.readFile(path)
	}
	if err != nil {
		return fmt.Errorf("%s: include %s: %w", where, name, err)
	}
	for _, s := range stack {
		if samePath(s, path) {
			return fmt.Errorf("%s: include %s: include loop (%s -> %s)", where, name, strings.Join(stack, " -> "), path)
		}
	}
	stack = append(stack, path)
	for n, raw := range splitLines(data) {
		at := fmt.Sprintf("%s:%d", path, n+1)
		text := cleanLine(raw)
		if strings.ContainsFunc(text, isControl) {
			return notText(at, text)
		}
		switch {
		case text == "":
		case text[0] == '[':
			return fmt.Errorf("%s: sections are not allowed in an included file (included from %s)", at, where)
		case isInclude(text):
			if err := p.include(text, at, stack, lines); err != nil {
				return err
			}
		default:
			*lines = append(*lines, line{text: text, where: at})
		}
	}
	return nil
}

func samePath(a, b string) bool {
	if a == b {
		return true
	}
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}

// applyLines sets a section's options on o and returns them as given.
// kb_base goes first, as fio sorts it before the sizes it changes.
func (p *parser) applyLines(o *opts, lines []line) ([]Option, error) {
	type parsed struct {
		opt        *option
		value, raw string
		bare       bool
		where      string
	}
	var first, rest []parsed
	for _, l := range lines {
		text, err := expandEnv(l.text, p.getenv)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l.where, err)
		}
		key, value, hasValue := strings.Cut(text, "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		opt, err := lookup(key)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l.where, err)
		}
		pl := parsed{opt: opt, value: unquote(value), raw: value, bare: !hasValue, where: l.where}
		if opt.name == "kb_base" {
			first = append(first, pl)
		} else {
			rest = append(rest, pl)
		}
	}
	var given []Option
	for _, pl := range append(first, rest...) {
		if err := o.apply(pl.opt, pl.value, pl.bare, pl.where); err != nil {
			return nil, err
		}
		given = append(given, Option{Name: pl.opt.name, Value: pl.raw})
	}
	return given, nil
}

// unquote strips one pair of matching quotes around a value, which fio
// would otherwise keep as part of it.
func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}

// expandEnv replaces each ${VAR} with the variable's value. fio replaces
// an unset one with nothing, which turns filename=${DEV} into a confusing
// error later or a file named after the job; here it is an error naming
// it. fio's $pagesize, $mb_memory and $ncpus keywords are refused too: they
// describe the host fio runs on and come with bc arithmetic.
func expandEnv(s string, getenv func(string) string) (string, error) {
	for _, kw := range []string{"$pagesize", "$mb_memory", "$ncpus"} {
		if strings.Contains(s, kw) {
			return "", fmt.Errorf("fio's %s keyword is not supported; write the value, or use ${VAR}", kw)
		}
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i+2:], '}')
		if j < 0 {
			break
		}
		name := s[i+2 : i+2+j]
		if name == "" {
			return "", errors.New("empty ${} in a value")
		}
		v := getenv(name)
		if v == "" {
			return "", fmt.Errorf("environment variable %s is not set (used as ${%s})", name, name)
		}
		if strings.ContainsFunc(v, isControl) {
			return "", fmt.Errorf("environment variable %s (used as ${%s}) holds a control character: %q", name, name, v)
		}
		b.WriteString(s[:i])
		b.WriteString(v)
		s = s[i+2+j+1:]
	}
	b.WriteString(s)
	return b.String(), nil
}
