// Package search is the search engine of the registry: the request model
// (Query, parsed from the Agent Finder request by ParseRequest or built by
// a door), the ranking, evidence, the cut-off, page tokens and the merge
// with other registries' results, behind one Engine. It knows no HTTP:
// each door (searchapi/xu, the MCP server, the site, ...) turns its
// request into a Query, calls Engine.Search, Agent, List or Facets, and
// writes the Answer in its own shape; errors come back as an *Error whose
// Kind the door maps to its own status and code. It is the only package
// that talks to Meilisearch (Meili), and it writes filters only through
// searchapi/filter.
//
// How a result is ranked. The request text is rewritten for the keyword
// side (Config.QueryRewriter keeps its informative terms), and each term is
// searched on its own, beside one vector query of the text as typed when
// there is an Embedder and two queries of all the terms over the tools
// index (the words of the servers' tools, toolsindex.go), where a server
// found counts as holding the terms its tools hold; searchapi/hybrid
// fuses those sub-queries into one order (keyword share 1 -
// SemanticRatio; a term hit the vector query's list left out gets its
// similarity from one more vector query when it could rank high), a
// preferred tag multiplying an entry's fused score by 1.5 for the order
// only. The first 30 fused results, the pool, are then re-ordered and
// scored together by the relevance model (searchapi/score): each
// candidate's keyword and semantic components, how many of the request's
// terms its name and text cover (rarer terms weigh more) and how much the
// request resembles small talk give a calibrated 0-100 score; a later
// result's score also counts how high both sides of the fused search
// place it (score.Model.Agreement). A result past the pool keeps its fused
// place and never scores above the pool's lowest, so scores fall down the
// ranking and every page slices the same sequence. Results below the
// cut-off (the Query's MinScore, else Config.MinScore, else the model's)
// are left out, and an empty first page says why (Answer.Reason). Among
// the results shown, at most two of one provider come before other
// providers' (crowding.go; score.Model.Crowd), no score changing. When the
// search federates, other registries' results are described like local
// ones and ranked with the pool on the same scale before the one cut-off.
// Trust and health are shown and filtered, never scored.
package search
