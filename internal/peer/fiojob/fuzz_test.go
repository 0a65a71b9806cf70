package fiojob

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cephbench/cephbench/internal/fuzztest"
)

// FuzzParse: a fio command line (words separated by white space) with a
// job file job.fio, which may include inc.fio, and every ${VAR} set to
// env, parses into the same plan each time, or a one-line error. Files are
// in memory: nothing is read from disk. Seeds: the field reports' command
// lines and job files (testdata) and job files with includes and
// variables.
func FuzzParse(f *testing.F) {
	lines, _ := filepath.Glob("testdata/*-cmdline*.txt")
	for _, name := range lines {
		b, _ := os.ReadFile(name)
		for line := range strings.Lines(string(b)) {
			f.Add(strings.TrimPrefix(strings.TrimSpace(line), "fio "), []byte(nil), []byte(nil), "")
		}
	}
	jobs, _ := filepath.Glob("testdata/*.fio")
	for _, name := range jobs {
		b, _ := os.ReadFile(name)
		f.Add("--output-format=json job.fio", b, []byte(nil), "")
	}
	f.Add("job.fio --runtime=10", []byte("[global]\ninclude inc.fio\nsize=${SIZE}\n[a]\nrw=randread\n[b]\nstonewall\nrw=write\n"),
		[]byte("ioengine=libaio\ndirect=1\nbs=4k\n; a comment\n"), "64m")
	f.Add("job.fio", []byte("[j]\nioengine=null\ninclude inc.fio\n"), []byte("size=1m\ninclude inc.fio\n"), "")
	f.Add("--name=x --filename=${DEV} --bsrange=4k-64k --rwmixread=70 --rw=randrw --numjobs=4 --group_reporting", []byte(nil), []byte(nil), "/dev/vdb")
	f.Add("--name=x --filename=f --size=1m --rw=randread:8 --rw_sequencer=identical --bssplit=4k/10:64k:32k/40,8k --ba=512 --bs_unaligned", []byte(nil), []byte(nil), "")
	f.Add("--name=x --filename=f --size=1m --rw=write:-8k --bs=4k,64k", []byte(nil), []byte(nil), "")
	f.Fuzz(func(t *testing.T, args string, job, inc []byte, env string) {
		files := map[string][]byte{"job.fio": job, "inc.fio": inc}
		readFile := func(path string) ([]byte, error) {
			if b, ok := files[path]; ok {
				return b, nil
			}
			return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
		}
		getenv := func(string) string { return env }
		plan, err := Parse(strings.Fields(args), getenv, readFile)
		fuzztest.OneLine(t, args, err)
		again, errAgain := Parse(strings.Fields(args), getenv, readFile)
		if !reflect.DeepEqual(plan, again) || (err == nil) != (errAgain == nil) || err != nil && err.Error() != errAgain.Error() {
			t.Fatalf("fio %s parses differently each time: %v, %v", args, err, errAgain)
		}
	})
}

// A job file written with CRLF line ends parses; a control character
// inside a line (a stray carriage return), in a variable or in an
// argument is refused in one line that shows it quoted.
func TestControlCharactersAreRefusedAndCRLFIsNot(t *testing.T) {
	fsys := files{"crlf.fio": "[j]\r\nioengine=null\r\nrw=read\r\nsize=1m\r\n", "cr.fio": "[j]\nioengine=null\nsize=1m\nrw=re\rad\n", "env.fio": "[j]\nioengine=null\nsize=${SIZE}\n"}
	if plan := mustParse(t, []string{"crlf.fio"}, fsys, nil); plan.Jobs[0].Workload.FileSize != 1<<20 {
		t.Errorf("CRLF job file: %+v", plan.Jobs[0].Workload)
	}
	for _, c := range []struct {
		args []string
		vars map[string]string
		says string
	}{
		{[]string{"cr.fio"}, nil, `cr.fio:4: "rw=re\rad" holds a control character`},
		{[]string{"env.fio"}, map[string]string{"SIZE": "1m\n2m"}, `environment variable SIZE (used as ${SIZE}) holds a control character: "1m\n2m"`},
		{[]string{"--name=x", "--size=1m\n"}, nil, `fio argument "--size=1m\n" holds a control character`},
	} {
		msg := parseErr(t, c.args, fsys, c.vars)
		if !strings.Contains(msg, c.says) || strings.ContainsAny(msg, "\r\n") {
			t.Errorf("%q: %q; want one line saying %q", c.args, msg, c.says)
		}
	}
}
