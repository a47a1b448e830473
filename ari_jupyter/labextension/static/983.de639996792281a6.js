"use strict";(self.rspackChunkari_jupyter_labextension=self.rspackChunkari_jupyter_labextension||[]).push([[983],{22(e,a,r){var n=r(23),o=r.n(n),t=r(24),i=(r.n(t))()(o());i.push([e.id,`.ari-AllocationStatus {
  display: flex;
  align-items: center;
  padding: 0 var(--jp-ui-font-size0, 4px);
  font-size: var(--jp-ui-font-size1);
  color: var(--jp-ui-font-color1);
  white-space: nowrap;
}

.ari-AllocationStatus.ari-mod-warn {
  color: var(--jp-warn-color0, #b26a00);
  font-weight: 600;
}

/* a demo site's recorded allocation: marked, so it is never read as the real one */
.ari-AllocationStatus.ari-mod-demo {
  font-style: italic;
  border: 1px dashed var(--jp-border-color1);
  border-radius: 2px;
}
`,""]),r.d(a,{},{A:i})},25(e,a,r){var n=r(23),o=r.n(n),t=r(24),i=(r.n(t))()(o());i.push([e.id,`/* The Runs side panel and the run-phase status item (JupyterLab variables: Light and Dark). */
.ari-RunsPanel {
  overflow: auto;
  padding: 8px 6px;
  color: var(--jp-ui-font-color1);
  background: var(--jp-layout-color1);
  font-size: var(--jp-ui-font-size1);
}

.ari-RunsPanel-header {
  display: flex;
  align-items: center;
  gap: 8px;
}

.ari-RunsPanel-header h2 {
  flex: 1;
  margin: 0;
  font-size: var(--jp-ui-font-size2);
}

.ari-RunsPanel-table {
  width: 100%;
  border-collapse: collapse;
}

.ari-RunsPanel-table th,
.ari-RunsPanel-table td {
  padding: 2px 3px;
  text-align: left;
  border-bottom: 1px solid var(--jp-border-color2);
}

/* A header wraps only between words ("Search / nodes"): "ジョブ" or "探索ノード" never stacks one
   character per line, and the four columns still fit the default side panel. */
.ari-RunsPanel-table th {
  word-break: keep-all;
}

.ari-RunsPanel-row {
  cursor: pointer;
}

/* A run id is one long word: it wraps rather than pushing the Jobs column past the edge. A
   metric name ("triad_mbps") has a break opportunity after each '_' (breakableId), taken
   first: a word is cut only when it alone is wider than the column. */
.ari-RunsPanel-table td.ari-RunsPanel-title,
.ari-RunsPanel-table td.ari-RunsPanel-best {
  overflow-wrap: anywhere;
}

/* ... and its column is never narrower than such a piece: "anywhere" alone lets the table
   squeeze it to a letter or two ("triad_mb ps", "mbp s"). */
.ari-RunsPanel-table td.ari-RunsPanel-best {
  min-width: 4.5ch;
}

.ari-RunsPanel-table td {
  vertical-align: top;
}

/* "2026-12-01 10:00" may take two lines (day, then time), never a break inside either. */
.ari-RunsPanel-started {
  color: var(--jp-ui-font-color2);
  font-size: var(--jp-ui-font-size0);
}

.ari-RunsPanel-started span {
  white-space: nowrap;
}

.ari-RunsPanel-row:hover,
.ari-RunsPanel-row:focus {
  background: var(--jp-layout-color2);
}

.ari-RunPhase {
  white-space: nowrap; /* a CJK phase word must not break one character per line */
  padding: 0 3px;
  border-radius: 3px;
  background: var(--jp-layout-color3);
}

/* The coloured badges are JupyterLab's light (100) shades in Light and Dark alike, so their
   text is dark in both themes: Dark's white text on them could hardly be read. */
.ari-RunPhase.ari-mod-starting,
.ari-RunPhase.ari-mod-exploring,
.ari-RunPhase.ari-mod-paper,
.ari-RunPhase.ari-mod-reproduce,
.ari-RunPhase.ari-mod-finished,
.ari-RunPhase.ari-mod-failed,
.ari-RunPhase.ari-mod-interrupted {
  color: var(--md-grey-900, #212121);
}

.ari-RunPhase.ari-mod-starting,
.ari-RunPhase.ari-mod-exploring,
.ari-RunPhase.ari-mod-paper,
.ari-RunPhase.ari-mod-reproduce {
  background: var(--jp-brand-color3);
}

.ari-RunPhase.ari-mod-finished {
  background: var(--jp-success-color3);
}

.ari-RunPhase.ari-mod-failed,
.ari-RunPhase.ari-mod-interrupted {
  background: var(--jp-error-color3);
}

/* The phase history: one line a phase, its time, its badge and how long it lasted (the
   time in tabular figures so the lines align; the duration wraps under a narrow panel) */
.ari-RunsPanel-phases {
  list-style: none;
  margin: 0;
  padding: 0;
}

.ari-RunsPanel-phases .ari-RunsPanel-phase {
  display: grid;
  /* time, phase, how long: the duration wraps in its own column, never under the time */
  grid-template-columns: max-content max-content minmax(0, 1fr);
  align-items: baseline;
  gap: 0 6px;
  margin: 1px 0;
}

.ari-RunsPanel-phases .ari-RunsPanel-day {
  margin-top: 4px;
  font-weight: 600;
  color: var(--jp-ui-font-color2);
}

.ari-RunsPanel-phases time {
  font-variant-numeric: tabular-nums;
  color: var(--jp-ui-font-color2);
}

.ari-RunsPanel-lasted {
  color: var(--jp-ui-font-color2);
}

.ari-RunsPanel-facts {
  display: grid;
  /* minmax(0, ...): a long value (a node id, "1 running") wraps inside the side panel instead
     of running past its edge */
  grid-template-columns: max-content minmax(0, 1fr);
  gap: 2px 8px;
}

.ari-RunsPanel-facts dd {
  margin: 0;
  min-width: 0;
  overflow-wrap: anywhere;
}

/* a finding's fix holds a command with a checkpoint path: it wraps inside the side panel */
.ari-RunsPanel-findings li {
  overflow-wrap: anywhere;
  min-width: 0;
}

.ari-RunsPanel-findings li.ari-mod-error {
  color: var(--jp-error-color1);
}

.ari-RunsPanel-findings li.ari-mod-warning {
  color: var(--jp-warn-color1);
}

.ari-RunsPanel-fix {
  color: var(--jp-ui-font-color2);
}

.ari-RunsPanel-findings code {
  font-family: var(--jp-code-font-family);
  font-size: var(--jp-code-font-size);
  background: var(--jp-layout-color2);
  color: var(--jp-content-font-color1);
  padding: 0 2px;
  word-break: break-all;
}

.ari-RunsPanel-log,
.ari-RunsPanel-jobtail {
  max-height: 24em;
  overflow: auto;
  padding: 4px;
  white-space: pre-wrap;
  word-break: break-all;
  font-family: var(--jp-code-font-family);
  font-size: var(--jp-code-font-size);
  background: var(--jp-layout-color2);
}

.ari-RunsPanel-job {
  margin: 4px 0;
  padding: 4px;
  border: 1px solid var(--jp-border-color2);
}

.ari-RunsPanel-error {
  color: var(--jp-error-color1);
}

/* What ARI's submission ledger recorded of a job: its request and handle, under the job's line */
.ari-RunsPanel-recorded,
.ari-RunsPanel-handle {
  color: var(--jp-ui-font-color1);
  font-size: var(--jp-ui-font-size0);
  overflow-wrap: anywhere;
}

/* one phrase of the request ("2 nodes") is never cut between its words */
.ari-RunsPanel-recorded span {
  white-space: nowrap;
}

.ari-RunsPanel-forgotten {
  font-style: italic;
}

.ari-RunsPanel-note,
.ari-RunsPanel-runid,
.ari-RunsPanel-workspace {
  color: var(--jp-ui-font-color2);
}

/* A run id or a path is one long word: it wraps in a narrow panel rather than being cut. */
.ari-RunsPanel-runid,
.ari-RunsPanel-workspace {
  overflow-wrap: anywhere;
}

.ari-RunsPanel-actions {
  display: flex;
  gap: 8px;
  margin: 8px 0;
}

.ari-RunPhaseStatus {
  padding: 0 5px;
  line-height: 24px;
}

.ari-RunsPanel-actions {
  flex-wrap: wrap;
}

.ari-RunsPanel-button {
  height: auto;
  min-height: 24px;
  white-space: normal;
  line-height: 1.3;
}

.ari-RunsPanel-workspace {
  overflow-wrap: anywhere; /* a long path wraps instead of widening the panel */
}

/* "All runs" over several workspaces: a heading row per workspace, its runs under it */
.ari-RunsPanel-grouphead th {
  text-align: left;
  font-weight: 600;
  padding-top: 8px;
  background: var(--jp-layout-color2);
  overflow-wrap: anywhere;
}
.ari-RunsPanel-groupcount {
  font-weight: normal;
  color: var(--jp-ui-font-color2);
}
.ari-RunsPanel-forget {
  font-size: var(--jp-ui-font-size0);
  margin-left: 4px;
}
`,""]),r.d(a,{},{A:i})},24(e){e.exports=function(e){var a=[];return a.toString=function(){return this.map(function(a){var r="",n=void 0!==a[5];return a[4]&&(r+="@supports (".concat(a[4],") {")),a[2]&&(r+="@media ".concat(a[2]," {")),n&&(r+="@layer".concat(a[5].length>0?" ".concat(a[5]):""," {")),r+=e(a),n&&(r+="}"),a[2]&&(r+="}"),a[4]&&(r+="}"),r}).join("")},a.i=function(e,r,n,o,t){"string"==typeof e&&(e=[[null,e,void 0]]);var i={};if(n)for(var s=0;s<this.length;s++){var l=this[s][0];null!=l&&(i[l]=!0)}for(var u=0;u<e.length;u++){var p=[].concat(e[u]);n&&i[p[0]]||(void 0!==t&&(void 0===p[5]||(p[1]="@layer".concat(p[5].length>0?" ".concat(p[5]):""," {").concat(p[1],"}")),p[5]=t),r&&(p[2]&&(p[1]="@media ".concat(p[2]," {").concat(p[1],"}")),p[2]=r),o&&(p[4]?(p[1]="@supports (".concat(p[4],") {").concat(p[1],"}"),p[4]=o):p[4]="".concat(o)),a.push(p))}},a}},23(e){e.exports=function(e){return e[1]}},16(e){var a=[];function r(e){for(var r=-1,n=0;n<a.length;n++)if(a[n].identifier===e){r=n;break}return r}function n(e,n){for(var o={},t=[],i=0;i<e.length;i++){var s=e[i],l=n.base?s[0]+n.base:s[0],u=o[l]||0,p="".concat(l," ").concat(u);o[l]=u+1;var d=r(p),c={css:s[1],media:s[2],sourceMap:s[3],supports:s[4],layer:s[5]};if(-1!==d)a[d].references++,a[d].updater(c);else{var h=function(e,a){var r=a.domAPI(a);return r.update(e),function(a){a?(a.css!==e.css||a.media!==e.media||a.sourceMap!==e.sourceMap||a.supports!==e.supports||a.layer!==e.layer)&&r.update(e=a):r.remove()}}(c,n);n.byIndex=i,a.splice(i,0,{identifier:p,updater:h,references:1})}t.push(p)}return t}e.exports=function(e,o){var t=n(e=e||[],o=o||{});return function(e){e=e||[];for(var i=0;i<t.length;i++){var s=r(t[i]);a[s].references--}for(var l=n(e,o),u=0;u<t.length;u++){var p=r(t[u]);0===a[p].references&&(a[p].updater(),a.splice(p,1))}t=l}}},18(e){var a={};e.exports=function(e,r){var n=function(e){if(void 0===a[e]){var r=document.querySelector(e);if(window.HTMLIFrameElement&&r instanceof window.HTMLIFrameElement)try{r=r.contentDocument.head}catch(e){r=null}a[e]=r}return a[e]}(e);if(!n)throw Error("Couldn't find a style target. This probably means that the value for the 'insert' parameter is invalid.");n.appendChild(r)}},20(e){e.exports=function(e){var a=document.createElement("style");return e.setAttributes(a,e.attributes),e.insert(a,e.options),a}},19(e,a,r){e.exports=function(e){var a=r.nc;a&&e.setAttribute("nonce",a)}},17(e){e.exports=function(e){if("u"<typeof document)return{update:function(){},remove:function(){}};var a=e.insertStyleElement(e);return{update:function(r){var n,o,t;n="",r.supports&&(n+="@supports (".concat(r.supports,") {")),r.media&&(n+="@media ".concat(r.media," {")),(o=void 0!==r.layer)&&(n+="@layer".concat(r.layer.length>0?" ".concat(r.layer):""," {")),n+=r.css,o&&(n+="}"),r.media&&(n+="}"),r.supports&&(n+="}"),(t=r.sourceMap)&&"u">typeof btoa&&(n+="\n/*# sourceMappingURL=data:application/json;base64,".concat(btoa(unescape(encodeURIComponent(JSON.stringify(t))))," */")),e.styleTagTransform(n,a,e.options)},remove:function(){var e;null===(e=a).parentNode||e.parentNode.removeChild(e)}}}},21(e){e.exports=function(e,a){if(a.styleSheet)a.styleSheet.cssText=e;else{for(;a.firstChild;)a.removeChild(a.firstChild);a.appendChild(document.createTextNode(e))}}},15(e,a,r){var n=r(16),o=r.n(n),t=r(17),i=r.n(t),s=r(18),l=r.n(s),u=r(19),p=r.n(u),d=r(20),c=r.n(d),h=r(21),f=r.n(h),m=r(22),g={};g.styleTagTransform=f(),g.setAttributes=p(),g.insert=l().bind(null,"head"),g.domAPI=i(),g.insertStyleElement=c(),o()(m.A,g),m.A&&m.A.locals&&m.A.locals;var v=r(25),w={};w.styleTagTransform=f(),w.setAttributes=p(),w.insert=l().bind(null,"head"),w.domAPI=i(),w.insertStyleElement=c(),o()(v.A,w),v.A&&v.A.locals&&v.A.locals}}]);