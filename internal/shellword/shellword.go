// Package shellword quotes words for a POSIX shell, as command lines are
// shown to users, kept in plan files and run on other hosts over ssh.
package shellword

import (
	"strings"
	"unicode"
)

// Quote is s as one word of a POSIX shell command line: as it is when it
// holds only characters no shell treats specially, else in single quotes.
func Quote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool { return !safe(r) }) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Join quotes each word of argv and joins them with spaces.
func Join(argv []string) string {
	words := make([]string, len(argv))
	for i, a := range argv {
		words[i] = Quote(a)
	}
	return strings.Join(words, " ")
}

func safe(r rune) bool {
	return r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("@%+=:,./_-", r))
}
