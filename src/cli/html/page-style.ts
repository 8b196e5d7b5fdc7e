/**
 * The page's CSS (inline: the page loads nothing). Rows are CSS grids of one template, so a device's
 * column lines up from the first node to the last; the header row and the node names stay in view
 * when the grid scrolls; rows off screen are not laid out (content-visibility), so 500 nodes scroll
 * as lightly as 5. `columns` is the number of device columns.
 */
export function pageStyle(columns: number): string {
  const place = Array.from({ length: columns }, (_, i) => `.k${i}{grid-column:${i + 4}}`).join("");
  return `:root{--cols:${Math.max(columns, 1)}}${BASE}${place}`;
}

const BASE = `
:root{--claimed:#2b6cb0;--joining:#2f9e44;--leaving:#d9822b;--excluded:#a0aec0;--blocked:#c92a2a;--target:#82c91e;--used:#5c7cfa;
--lead:13rem 8rem 11rem;--cell:1.6rem;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;font-size:14px;color:#1a202c}
*{box-sizing:border-box}
body{margin:0;display:flex;flex-direction:column;height:100vh}
[hidden]{display:none!important}
.top{padding:.5rem 1rem;border-bottom:1px solid #cbd5e0;background:#f7fafc}
h1{font-size:1.15rem;margin:0 0 .25rem}
.summary,.hint{margin:.1rem 0;color:#4a5568}
.filters{display:flex;flex-wrap:wrap;gap:.5rem 1.25rem;align-items:center;margin:.4rem 0}
.filters fieldset{border:0;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:.2rem .9rem}
.filters legend{float:left;margin-right:.5rem;font-weight:600}
.legend .mark{display:inline-block;width:1.2rem;text-align:center;color:#fff;border-radius:3px}
#q{width:14rem;padding:.2rem .4rem}
.grid{flex:1;min-height:0;overflow:auto;position:relative}
.row{display:grid;grid-template-columns:var(--lead) repeat(var(--cols),var(--cell));width:max-content;
min-width:100%;align-items:center;border-bottom:1px solid #edf2f7;content-visibility:auto;contain-intrinsic-size:auto 1.9rem}
.row>*{grid-row:1}.row>.nm{grid-column:1}.row>.st{grid-column:2}.row>.bars{grid-column:3}
.row.head{position:sticky;top:0;z-index:3;background:#fff;border-bottom:2px solid #a0aec0;content-visibility:visible;align-items:end;font-weight:600}
.nm{position:sticky;left:0;z-index:2;background:#fff;text-align:left;border:0;padding:.2rem .5rem;font:inherit;overflow:hidden;
text-overflow:ellipsis;white-space:nowrap;cursor:pointer;height:100%}
.row.head .nm{cursor:default}
button.nm:hover,button.nm[aria-expanded=true]{text-decoration:underline;background:#ebf4ff}
.st{padding:0 .4rem;color:#4a5568;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.n-blocked .st,.n-Failed .st,.n-Degraded .st{color:var(--blocked);font-weight:600}
.note{cursor:help;display:inline-block;width:1.1em;height:1.1em;line-height:1.1em;text-align:center;border-radius:50%;
background:#4a5568;color:#fff;font:700 .75em/1.1em Georgia,serif}
.bars{display:flex;flex-direction:column;gap:2px;padding:.15rem .4rem}
.bar{display:flex;height:5px;background:#e2e8f0;border-radius:2px;overflow:hidden}
.bar.thin-pool{height:3px;margin-left:.6rem}
.bar i,.big i{display:block;height:100%}
.p-claimed{background:var(--claimed)}.p-joining{background:var(--joining)}.p-leaving{background:var(--leaving)}
.p-used{background:var(--used)}.p-target{background:var(--target)}
.dv{writing-mode:vertical-rl;transform:rotate(180deg);font-size:.75rem;font-weight:400;padding:.2rem 0;white-space:nowrap;
max-height:7rem;overflow:hidden;text-overflow:ellipsis;justify-self:center}
.c{width:calc(var(--cell) - 3px);height:1.3rem;margin:1px;border:0;border-radius:3px;color:#fff;font:700 .8rem/1 system-ui,sans-serif;
cursor:pointer;padding:0}
.c:focus-visible,.nm:focus-visible{outline:2px solid #000;outline-offset:1px}
.s-claimed .mark,.c.s-claimed{background:var(--claimed)}
.s-joining .mark,.c.s-joining{background:var(--joining)}
.s-leaving .mark,.c.s-leaving{background:var(--leaving)}
.s-excluded .mark,.c.s-excluded{background:var(--excluded)}
.s-blocked .mark,.c.s-blocked{background:var(--blocked)}
.hide-claimed .c.s-claimed,.hide-joining .c.s-joining,.hide-leaving .c.s-leaving,.hide-excluded .c.s-excluded,
.hide-blocked .c.s-blocked{visibility:hidden}
.detail{position:sticky;left:0;width:min(100%,70rem);max-width:calc(100vw - 2rem);padding:.6rem 1rem .9rem 1.5rem;
background:#f7fafc;border-bottom:2px solid #cbd5e0}
.detail h2{font-size:1rem;margin:.2rem 0 .4rem}
.detail h3{font-size:.9rem;margin:.7rem 0 .3rem}
.detail table{border-collapse:collapse;width:100%}
.detail td,.detail th{text-align:left;vertical-align:top;padding:.15rem .5rem;border-bottom:1px solid #e2e8f0}
.detail tr.sel{outline:2px solid #2b6cb0;background:#ebf4ff}
.detail td.state{white-space:nowrap;font-weight:600}
.detail td.state.s-blocked{color:var(--blocked)}.detail td.state.s-joining{color:var(--joining)}
.detail td.state.s-leaving{color:var(--leaving)}.detail td.state.s-claimed{color:var(--claimed)}
.detail ul{margin:.2rem 0;padding-left:1.2rem}
.big{display:flex;width:20rem;height:.8rem;background:#e2e8f0;border-radius:3px;overflow:hidden}
.barline{display:flex;gap:.8rem;align-items:center;margin:.2rem 0}.barline .name{min-width:12rem;font-family:ui-monospace,monospace}
.steps{margin:.2rem 0;padding-left:2rem}.steps li{margin:.15rem 0}
.steps code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;background:#edf2f7;padding:0 .25rem;word-break:break-all}
.steps .why{color:#4a5568;display:block}
.steps li.destructive code{background:#fff5f5;color:var(--blocked)}
.tag{display:inline-block;margin-left:.4rem;padding:0 .3rem;border-radius:3px;background:var(--blocked);color:#fff;font-size:.75rem;font-weight:700}
`;
