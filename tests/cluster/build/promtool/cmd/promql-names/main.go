// promql-names reads a JSON array of PromQL expressions on stdin and prints, for each, the metric
// names its selectors name, as Prometheus's own parser (promql/parser, the one promtool and the
// server use) reads them: [{"expr": ..., "names": [...], "error": ""}]. The monitoring tests hold
// every name of deploy/components/monitoring/'s rules and dashboard to the bot's real /metrics.
package main

import (
	"encoding/json"
	"os"
	"sort"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

type result struct {
	Expr  string   `json:"expr"`
	Names []string `json:"names"`
	Error string   `json:"error"`
}

func names(p parser.Parser, expr string) result {
	out := result{Expr: expr, Names: []string{}}
	parsed, err := p.ParseExpr(expr)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	seen := map[string]bool{}
	parser.Inspect(parsed, func(node parser.Node, _ []parser.Node) error {
		if vs, ok := node.(*parser.VectorSelector); ok {
			name := vs.Name
			for _, m := range vs.LabelMatchers {
				if m.Name == labels.MetricName && m.Type == labels.MatchEqual {
					name = m.Value
				}
			}
			if name == "" {
				name = "{" + vs.String() + "}" // a selector naming no metric: said as such
			}
			seen[name] = true
		}
		return nil
	})
	for name := range seen {
		out.Names = append(out.Names, name)
	}
	sort.Strings(out.Names)
	return out
}

func main() {
	var exprs []string
	if err := json.NewDecoder(os.Stdin).Decode(&exprs); err != nil {
		os.Stderr.WriteString("promql-names: stdin is not a JSON array of strings: " + err.Error() + "\n")
		os.Exit(2)
	}
	p := parser.NewParser(parser.Options{})
	results := make([]result, 0, len(exprs))
	for _, expr := range exprs {
		results = append(results, names(p, expr))
	}
	if err := json.NewEncoder(os.Stdout).Encode(results); err != nil {
		os.Exit(1)
	}
}
