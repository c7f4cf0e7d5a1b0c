/* heapsift web: opening profile files from the browser: the "Open profile…" button (a file
 * input) and files dropped anywhere on the page are sent to POST /api/upload, one request
 * per file with the file as the body. The files of one choice or one drop go to one
 * target (sorted by time then name, the others join the first's), which is new, named
 * after the first file, unless a file of that name was opened before: then they join its
 * target, as a newer dump of it. The page switches to that target, newest profile as B. A file too large or not a
 * profile is shown as the page's error; the server stays up either way. An uploaded
 * target's Close button frees it on the server (POST /api/close) and the page goes to the
 * first target left. */
let uploadMax = 256 * 1024 * 1024;

async function uploadOne(file, target) {
  const q = { name: file.name, ...(target !== null ? { target } : {}) };
  try {
    return await apiPost("upload", q, file);
  } catch (e) {
    throw new Error(/^HTTP /.test(e.message) ? file.name + ": " + e.message : e.message);
  }
}

/* Sends files; switches to their target; the first error is shown after the switch. */
async function openFiles(list) {
  const files = [...list].sort((x, y) => x.lastModified - y.lastModified || (x.name < y.name ? -1 : 1));
  if (!files.length) return;
  const busy = $("upload-busy");
  let target = null, err = "";
  try { uploadMax = (await api("targets")).upload_max || uploadMax; } catch (e) { /* keep */ }
  for (const f of files) {
    busy.textContent = "opening " + f.name + "…";
    try {
      if (f.size > uploadMax) {
        throw new Error(f.name + ": too large (" + fmtIn(f.size, null) + "; heapsift web takes up to " +
                        fmtIn(uploadMax, null) + ")");
      }
      target = (await uploadOne(f, target)).target;
    } catch (e) {
      err = err || e.message;
    }
  }
  busy.textContent = "";
  if (target !== null) await switchTarget(target);
  if (err) showError("cannot open the profile: " + err);
}

/* The page on target i (null: the first one listed), newest profile as B. */
async function switchTarget(i) {
  state.target = i !== null ? i : (state.targets[0] ? state.targets[0].index : 0);
  state.a = state.b = null;
  state.followB = true;
  state.sample = "";
  state.zoom = state.dzoom = null;
  await refresh(true);
}

async function closeTarget() {
  try {
    await apiPost("close", { target: state.target });
  } catch (e) {
    showError("cannot close the target: " + e.message);
    return;
  }
  state.targets = state.targets.filter((t) => t.index !== state.target);
  await switchTarget(null);
}

function initUpload() {
  const input = $("upload-file");
  $("upload-open").addEventListener("click", () => input.click());
  $("target-close").addEventListener("click", closeTarget);
  input.addEventListener("change", async () => {
    const files = [...input.files];
    input.value = "";
    await openFiles(files);
  });
  const hasFiles = (e) => e.dataTransfer && [...e.dataTransfer.types].includes("Files");
  document.addEventListener("dragover", (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = "copy";
    document.body.classList.add("dropping");
  });
  document.addEventListener("dragleave", (e) => {
    if (!e.relatedTarget) document.body.classList.remove("dropping");
  });
  document.addEventListener("drop", (e) => {
    document.body.classList.remove("dropping");
    if (!e.dataTransfer || !e.dataTransfer.files.length) return;
    e.preventDefault();
    openFiles(e.dataTransfer.files);
  });
}

initUpload();
