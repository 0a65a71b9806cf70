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
