"use strict";(self.rspackChunkari_jupyter_labextension=self.rspackChunkari_jupyter_labextension||[]).push([[983],{22(a,e,r){var n=r(23),o=r.n(n),t=r(24),i=(r.n(t))()(o());i.push([a.id,`.ari-AllocationStatus {
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
`,""]),r.d(e,{},{A:i})},25(a,e,r){var n=r(23),o=r.n(n),t=r(24),i=(r.n(t))()(o());i.push([a.id,`/* The Runs side panel and the run-phase status item (JupyterLab variables: Light and Dark). */
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

.ari-RunsPanel-table th {
  white-space: nowrap; /* "ジョブ" must not stack one character per line */
}

.ari-RunsPanel-row {
  cursor: pointer;
}

/* A run id is one long word: it wraps rather than pushing the Jobs column past the edge. */
.ari-RunsPanel-table td.ari-RunsPanel-title,
.ari-RunsPanel-table td.ari-RunsPanel-best {
  overflow-wrap: anywhere;
}

.ari-RunsPanel-table td {
  vertical-align: top;
}

.ari-RunsPanel-started {
  color: var(--jp-ui-font-color2);
  font-size: var(--jp-ui-font-size0);
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
`,""]),r.d(e,{},{A:i})},24(a){a.exports=function(a){var e=[];return e.toString=function(){return this.map(function(e){var r="",n=void 0!==e[5];return e[4]&&(r+="@supports (".concat(e[4],") {")),e[2]&&(r+="@media ".concat(e[2]," {")),n&&(r+="@layer".concat(e[5].length>0?" ".concat(e[5]):""," {")),r+=a(e),n&&(r+="}"),e[2]&&(r+="}"),e[4]&&(r+="}"),r}).join("")},e.i=function(a,r,n,o,t){"string"==typeof a&&(a=[[null,a,void 0]]);var i={};if(n)for(var s=0;s<this.length;s++){var l=this[s][0];null!=l&&(i[l]=!0)}for(var u=0;u<a.length;u++){var p=[].concat(a[u]);n&&i[p[0]]||(void 0!==t&&(void 0===p[5]||(p[1]="@layer".concat(p[5].length>0?" ".concat(p[5]):""," {").concat(p[1],"}")),p[5]=t),r&&(p[2]&&(p[1]="@media ".concat(p[2]," {").concat(p[1],"}")),p[2]=r),o&&(p[4]?(p[1]="@supports (".concat(p[4],") {").concat(p[1],"}"),p[4]=o):p[4]="".concat(o)),e.push(p))}},e}},23(a){a.exports=function(a){return a[1]}},16(a){var e=[];function r(a){for(var r=-1,n=0;n<e.length;n++)if(e[n].identifier===a){r=n;break}return r}function n(a,n){for(var o={},t=[],i=0;i<a.length;i++){var s=a[i],l=n.base?s[0]+n.base:s[0],u=o[l]||0,p="".concat(l," ").concat(u);o[l]=u+1;var d=r(p),c={css:s[1],media:s[2],sourceMap:s[3],supports:s[4],layer:s[5]};if(-1!==d)e[d].references++,e[d].updater(c);else{var h=function(a,e){var r=e.domAPI(e);return r.update(a),function(e){e?(e.css!==a.css||e.media!==a.media||e.sourceMap!==a.sourceMap||e.supports!==a.supports||e.layer!==a.layer)&&r.update(a=e):r.remove()}}(c,n);n.byIndex=i,e.splice(i,0,{identifier:p,updater:h,references:1})}t.push(p)}return t}a.exports=function(a,o){var t=n(a=a||[],o=o||{});return function(a){a=a||[];for(var i=0;i<t.length;i++){var s=r(t[i]);e[s].references--}for(var l=n(a,o),u=0;u<t.length;u++){var p=r(t[u]);0===e[p].references&&(e[p].updater(),e.splice(p,1))}t=l}}},18(a){var e={};a.exports=function(a,r){var n=function(a){if(void 0===e[a]){var r=document.querySelector(a);if(window.HTMLIFrameElement&&r instanceof window.HTMLIFrameElement)try{r=r.contentDocument.head}catch(a){r=null}e[a]=r}return e[a]}(a);if(!n)throw Error("Couldn't find a style target. This probably means that the value for the 'insert' parameter is invalid.");n.appendChild(r)}},20(a){a.exports=function(a){var e=document.createElement("style");return a.setAttributes(e,a.attributes),a.insert(e,a.options),e}},19(a,e,r){a.exports=function(a){var e=r.nc;e&&a.setAttribute("nonce",e)}},17(a){a.exports=function(a){if("u"<typeof document)return{update:function(){},remove:function(){}};var e=a.insertStyleElement(a);return{update:function(r){var n,o,t;n="",r.supports&&(n+="@supports (".concat(r.supports,") {")),r.media&&(n+="@media ".concat(r.media," {")),(o=void 0!==r.layer)&&(n+="@layer".concat(r.layer.length>0?" ".concat(r.layer):""," {")),n+=r.css,o&&(n+="}"),r.media&&(n+="}"),r.supports&&(n+="}"),(t=r.sourceMap)&&"u">typeof btoa&&(n+="\n/*# sourceMappingURL=data:application/json;base64,".concat(btoa(unescape(encodeURIComponent(JSON.stringify(t))))," */")),a.styleTagTransform(n,e,a.options)},remove:function(){var a;null===(a=e).parentNode||a.parentNode.removeChild(a)}}}},21(a){a.exports=function(a,e){if(e.styleSheet)e.styleSheet.cssText=a;else{for(;e.firstChild;)e.removeChild(e.firstChild);e.appendChild(document.createTextNode(a))}}},15(a,e,r){var n=r(16),o=r.n(n),t=r(17),i=r.n(t),s=r(18),l=r.n(s),u=r(19),p=r.n(u),d=r(20),c=r.n(d),h=r(21),f=r.n(h),v=r(22),m={};m.styleTagTransform=f(),m.setAttributes=p(),m.insert=l().bind(null,"head"),m.domAPI=i(),m.insertStyleElement=c(),o()(v.A,m),v.A&&v.A.locals&&v.A.locals;var g=r(25),w={};w.styleTagTransform=f(),w.setAttributes=p(),w.insert=l().bind(null,"head"),w.domAPI=i(),w.insertStyleElement=c(),o()(g.A,w),g.A&&g.A.locals&&g.A.locals}}]);