// Keyboard moves in a list table: ArrowDown / ArrowUp go to the same control one row down or up,
// Home / End to the first or last row; "/" outside a text field jumps to the list's search box.
// Tab order stays the browser's; this only adds the moves a long list needs.

const MOVES = { ArrowDown: (i) => i + 1, ArrowUp: (i) => i - 1, Home: () => 0, End: (_, n) => n - 1 };

export function rowKeys(tbody) {
  tbody.addEventListener('keydown', (event) => {
    const move = MOVES[event.key];
    const cell = event.target.closest('td');
    if (!move || !cell || event.altKey || event.ctrlKey || event.metaKey) return;
    const rows = [...tbody.rows];
    const next = rows[move(rows.indexOf(cell.parentElement), rows.length)];
    const target = next && next.cells[cell.cellIndex] && next.cells[cell.cellIndex].querySelector('a, button, input');
    if (!target) return;
    event.preventDefault();
    target.focus();
  });
}

// One listener for the document; each list render points it at its own search box.
let searchBox = null;
document.addEventListener('keydown', (event) => {
  if (event.key !== '/' || !searchBox || !searchBox.isConnected) return;
  if (event.target.closest('input, textarea, select, [contenteditable="true"]')) return;
  event.preventDefault();
  searchBox.focus();
});

export function slashFocuses(search) { searchBox = search; }
