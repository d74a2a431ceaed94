package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// TestHelpEverywhere: every subcommand's --help (and help SUBCOMMAND) goes
// to stdout, exits 0, and shows double-dash flags only.
func TestHelpEverywhere(t *testing.T) {
	singleDash := regexp.MustCompile(`(?m)^\s+-[a-z]`)
	for _, c := range commands() {
		for _, args := range [][]string{{c.name, "--help"}, {c.name, "-h"}, {"help", c.name}} {
			var stdout, stderr bytes.Buffer
			if code := run(t.Context(), args, &stdout, &stderr); code != 0 {
				t.Errorf("%v: exit %d, stderr %s", args, code, stderr.String())
			}
			out := stdout.String()
			if !strings.HasPrefix(out, "Usage: agentfinder "+c.name) || stderr.Len() != 0 {
				t.Errorf("%v: stdout %.80q, stderr %.200q", args, out, stderr.String())
			}
			if m := singleDash.FindString(out); m != "" || !strings.Contains(out, "  --") {
				t.Errorf("%v: a flag without two dashes (%q) or none at all:\n%s", args, m, out)
			}
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run(t.Context(), []string{"help"}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "  version ") {
		t.Errorf("help: exit %d, lists no version command:\n%s", code, stdout.String())
	}
}

// TestSuggestions: an unknown command or flag names the closest one; a bad
// value says what was expected, from the command line or the environment.
func TestSuggestions(t *testing.T) {
	cases := []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"serch", "x"}, nil, `unknown command "serch" (did you mean "search"?)`},
		{[]string{"crawl", "--sed", "a.test"}, nil, "unknown flag --sed (did you mean --seed?)"},
		{[]string{"validate", "--allow-privat", "x.json"}, nil, "did you mean --allow-private?"},
		{[]string{"search", "--timeout", "5", "x"}, nil, `--timeout "5": want a duration such as 5s`},
		{[]string{"crawl", "--seed", "a.test", "--max-depth", "deep"}, nil, "want a whole number"},
		{[]string{"crawl", "--seed", "a.test", "--no-index"}, map[string]string{"AGENTFINDER_DELAY": "5"}, `AGENTFINDER_DELAY="5": want a duration such as 5s`},
	}
	for _, c := range cases {
		for k, v := range c.env {
			t.Setenv(k, v)
		}
		var stdout, stderr bytes.Buffer
		if code := run(t.Context(), c.args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, code, stderr.String(), c.want)
		}
	}
	if got := closest("zzzz", []string{"seed", "serve"}); got != "" {
		t.Errorf("closest of an unrelated word = %q, want none", got)
	}
}
