package aggregate

import (
	"os/exec"
	"strings"
	"testing"
)

// What reads results links no I/O code: result, aggregate and report
// import no engine, runner, workload, pacer or network package, so that
// compare and report build without them, and imports run one way.
func TestReadersImportNoIOCode(t *testing.T) {
	const module = "github.com/cephbench/cephbench/"
	forbidden := []string{"engine", "runner", "workload", "pace", "netbench"}
	for _, tags := range []string{"", "ceph,pacific"} {
		cmd := exec.Command("go", "list", "-tags", tags, "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`,
			module+"result/...", module+"aggregate", module+"report/...")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list: %v", err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			pkg, imports, _ := strings.Cut(line, " ")
			for _, imp := range strings.Fields(imports) {
				for _, f := range forbidden {
					if imp == module+f || strings.HasPrefix(imp, module+f+"/") {
						t.Errorf("tags %q: %s imports %s, so result, aggregate or report link it", tags, strings.TrimPrefix(pkg, module), strings.TrimPrefix(imp, module))
					}
				}
			}
		}
	}
}
