package searchapi

import "net/http"

// page is the small search page served at "/": a form that calls POST
// /search from the browser and lists the results. It has no server-side
// templating, so nothing a user types is ever rendered by the server.
const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Agent Finder</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font-family:system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#222}
form{display:flex;gap:.5rem;flex-wrap:wrap}input[type=text]{flex:1;min-width:16rem;padding:.5rem;font-size:1rem}
select,button{padding:.5rem}.r{border-bottom:1px solid #ddd;padding:.75rem 0}.s{color:#666;font-size:.85rem}
.t{display:inline-block;background:#eef;border-radius:3px;padding:0 .3rem;margin-right:.2rem;font-size:.8rem}
</style></head><body>
<h1>Agent Finder</h1>
<form id="f"><input type="text" id="q" placeholder="Describe what you need, e.g. book a flight to Tokyo" autofocus>
<select id="ty"><option value="">any type</option><option>application/a2a-agent-card+json</option>
<option>application/mcp-server+json</option><option>application/ai-registry+json</option></select>
<select id="fed"><option>auto</option><option>none</option><option>referrals</option></select>
<button>Search</button></form>
<div id="out"></div><button id="more" hidden>More</button>
<p class="s">API: <a href="/openapi.json">OpenAPI</a> · <a href="/.well-known/ai-catalog.json">this registry's catalog</a></p>
<script>
const out=document.getElementById('out'),more=document.getElementById('more');let last=null;
function el(tag,cls,text){const e=document.createElement(tag);if(cls)e.className=cls;if(text!=null)e.textContent=text;return e}
async function run(token){
  const q={text:document.getElementById('q').value,federation:document.getElementById('fed').value};
  const ty=document.getElementById('ty').value;if(ty)q.type=ty;
  const body={query:q,pageSize:10};if(token)body.pageToken=token;else out.textContent='';
  const r=await fetch('/search',{method:'POST',headers:{'Content-Type':'application/json'},body:JSON.stringify(body)});
  const j=await r.json();
  if(!r.ok){out.appendChild(el('p',null,(j.error&&j.error.message)||'error'));return}
  for(const x of j.results){const d=el('div','r');
    const a=el('a',null,x.displayName||x.identifier);if(x.url&&/^https?:/.test(x.url))a.href=x.url;d.appendChild(a);
    d.appendChild(el('span','s','  '+x.type+' · score '+x.score+' · '+(x.publisher||'')));
    if(x.description)d.appendChild(el('div',null,x.description));
    const tg=el('div');for(const t of (x.tags||[]))tg.appendChild(el('span','t',t));d.appendChild(tg);
    d.appendChild(el('div','s',x.identifier));out.appendChild(d)}
  if(!j.results.length&&!token)out.appendChild(el('p',null,'No results.'));
  last=j.pageToken||null;more.hidden=!last}
document.getElementById('f').addEventListener('submit',e=>{e.preventDefault();run(null)});
more.addEventListener('click',()=>run(last));
</script></body></html>`

func (s *Server) handlePage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'")
	_, _ = w.Write([]byte(page))
}
