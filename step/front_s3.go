package step

// S3 is what an s3 bench phase is beyond its workload (whose Mix holds
// the phase's shares of put, get, delete, list and stat).
type S3 struct {
	// Phase names the phase: put, get, list, delete or mixed. A get, list
	// or delete phase works on the objects there are when it starts, and
	// its heading says what it does in S3's words.
	Phase string `json:"phase"`
}
