--[[
The paper's Quarto subset for pandoc (parbench.render.subset names it): numbers the
sections, figures and tables, turns @sec-, @fig- and @tbl- references into links that say
"Section 2", "Figure 3", "Table 1" (`[-@fig-x]`: just "3"), and draws the two callout
kinds, `::: {.callout-note title="..."}` and `.callout-warning`. The HTML and the Typst
(PDF) runs use this one filter, so both show the same numbers; Typst's own figure
numbering is switched off (render/typst.py).

Metadata: `number-sections` (true: the section numbers are written into the headings, as
Quarto shows them). A reference to an id that does not exist, and a citation (the paper
has no bibliography), stop the render with a message that starts with CROSSREF: and
names each one.
]]

local stringify = pandoc.utils.stringify

local CALLOUTS = {
  note = { title = "Note", colour = "#0d6efd" },
  warning = { title = "Warning", colour = "#e0a800" },
}
local PREFIX = { fig = "Figure", tbl = "Table", sec = "Section" }

-- id -> {kind, number (a string, "" for an unnumbered section), title (inlines)}
local targets = {}
local order = { fig = {}, tbl = {}, sec = {} }
local counts = { fig = 0, tbl = 0 }

local function register(kind, id, number, title)
  if targets[id] then
    error("CROSSREF: duplicate cross-reference id #" .. id)
  end
  targets[id] = { kind = kind, number = number, title = title }
  table.insert(order[kind], id)
end

local function callout_kind(div)
  for _, class in ipairs(div.classes) do
    local kind = class:match("^callout%-(%a+)$")
    if kind and CALLOUTS[kind] then
      return kind
    end
  end
end

-- Sections: numbered like pandoc's --number-sections, the headings of the body only
-- (not those inside a callout or a quotation).
local function number_sections(blocks, counters, nested, show)
  for i, block in ipairs(blocks) do
    if block.t == "Header" then
      local number = ""
      if not nested and not block.classes:includes("unnumbered") then
        counters[block.level] = (counters[block.level] or 0) + 1
        for deeper = block.level + 1, 6 do
          counters[deeper] = 0
        end
        local parts = {}
        for level = 1, block.level do
          table.insert(parts, tostring(counters[level] or 0))
        end
        number = table.concat(parts, ".")
        if show then
          local title = block.content
          block.content = pandoc.Inlines({ pandoc.Span(number, { class = "header-section-number" }), pandoc.Space() })
          block.content:extend(title)
        end
      end
      if block.identifier:match("^sec%-") then
        register("sec", block.identifier, number, block.content)
      end
      blocks[i] = block
    elseif block.t == "Div" then
      number_sections(block.content, counters, nested or callout_kind(block) ~= nil, show)
    elseif block.t == "BlockQuote" then
      number_sections(block.content, counters, true, show)
    end
  end
end

-- "Figure 3:" before a float's caption.
local function caption_with_number(kind, number, caption)
  local has_text = stringify(caption) ~= ""
  local label = pandoc.Span({ pandoc.Str(PREFIX[kind]), pandoc.Space(),
                              pandoc.Str(number .. (has_text and ":" or "")) }, { class = "float-label" })
  if not has_text then
    return pandoc.Blocks({ pandoc.Plain({ label }) })
  end
  local first = caption[1]
  if first.t == "Plain" or first.t == "Para" then
    local inlines = pandoc.Inlines({ label, pandoc.Space() })
    inlines:extend(first.content)
    first.content = inlines
    caption[1] = first
    return caption
  end
  local out = pandoc.Blocks({ pandoc.Plain({ label }) })
  out:extend(caption)
  return out
end

local function number_float(kind, el)
  if not el.identifier:match("^" .. kind .. "%-") then
    return nil
  end
  counts[kind] = counts[kind] + 1
  local number = tostring(counts[kind])
  register(kind, el.identifier, number)
  el.caption.long = caption_with_number(kind, number, el.caption.long)
  if kind == "fig" and not el.classes:includes("quarto-figure") then
    el.classes:insert("quarto-figure")
  end
  return el
end

-- A callout: a header with its title and a body (HTML, styled by render/style.py), or in
-- Typst a tinted box with a coloured rule on its left (pandoc's Typst writer drops a
-- Div's classes, which would leave the callout as plain paragraphs).
local function callout(div)
  local kind = callout_kind(div)
  if not kind then
    return nil
  end
  local title = div.attributes.title and pandoc.Inlines(div.attributes.title) or pandoc.Inlines(CALLOUTS[kind].title)
  if FORMAT:match("typst") then
    local colour = CALLOUTS[kind].colour
    local out = pandoc.Blocks({ pandoc.RawBlock("typst", string.format(
      '#block(width: 100%%, inset: 8pt, radius: 2pt, fill: rgb("%s").lighten(92%%), '
      .. 'stroke: (left: 3pt + rgb("%s")), breakable: true)[', colour, colour)),
      pandoc.Para({ pandoc.Strong(title) }) })
    out:extend(div.content)
    out:insert(pandoc.RawBlock("typst", "]"))
    return out
  end
  div.attributes.title = nil
  return pandoc.Div({ pandoc.Div(pandoc.Plain(title), { class = "callout-header" }),
                      pandoc.Div(div.content, { class = "callout-body" }) },
                    { id = div.identifier, class = "callout callout-" .. kind })
end

-- A `.block` div, as Quarto's typst format writes it: a Typst block whose parameters are
-- the div's attributes (`::: {.block breakable="false"}` keeps a label with the code
-- block it names, on one page). In HTML it stays a div, as in Quarto's.
local function typst_block(div)
  if not (FORMAT:match("typst") and div.classes:includes("block")) then
    return nil
  end
  local params = {}
  for key, value in pairs(div.attributes) do
    table.insert(params, key .. ": " .. value)
  end
  table.sort(params)
  local out = pandoc.Blocks({ pandoc.RawBlock("typst", "#block(" .. table.concat(params, ", ") .. ")[") })
  out:extend(div.content)
  out:insert(pandoc.RawBlock("typst", "]"))
  return out
end

-- The known id nearest to a misspelt one (edit distance), for the error's hint.
local function distance(a, b)
  local row = {}
  for j = 0, #b do
    row[j] = j
  end
  for i = 1, #a do
    local previous, diagonal = row[0], row[0]
    row[0] = i
    for j = 1, #b do
      previous = row[j]
      row[j] = math.min(row[j] + 1, row[j - 1] + 1, diagonal + (a:sub(i, i) == b:sub(j, j) and 0 or 1))
      diagonal = previous
    end
  end
  return row[#b]
end

local function explain_unknown(key)
  local kind = key:match("^(%a+)%-")
  if not PREFIX[kind] then
    return "@" .. key .. " (not a cross-reference of a kind the paper uses: @sec-, @fig-, @tbl-; "
      .. "and the paper has no bibliography for a citation; write \\@ for a literal @)"
  end
  local best, best_distance = nil, math.max(2, #key // 4)
  for _, id in ipairs(order[kind]) do
    local d = distance(key, id)
    if d <= best_distance then
      best, best_distance = id, d
    end
  end
  if best then
    return "@" .. key .. " (no element has id #" .. key .. "; did you mean @" .. best .. "?)"
  end
  if #order[kind] > 0 then
    return "@" .. key .. " (no element has id #" .. key .. "; known: " .. table.concat(order[kind], ", ") .. ")"
  end
  return "@" .. key .. " (no element has id #" .. key .. ")"
end

local unknown = {}

local function reference(cite)
  local out = pandoc.Inlines({})
  for n, citation in ipairs(cite.citations) do
    local target = targets[citation.id]
    if not target then
      table.insert(unknown, explain_unknown(citation.id))
    else
      local text
      if citation.mode == "SuppressAuthor" and target.number ~= "" then
        text = pandoc.Inlines(target.number)
      elseif target.kind == "sec" and target.number == "" then
        text = target.title
      else
        text = pandoc.Inlines({ pandoc.Str(PREFIX[target.kind]), pandoc.Space(), pandoc.Str(target.number) })
      end
      if n > 1 then
        out:extend({ pandoc.Str(","), pandoc.Space() })
      end
      if #citation.prefix > 0 then
        out:extend(citation.prefix)
        out:insert(pandoc.Space())
      end
      out:insert(pandoc.Link(text, "#" .. citation.id, "", { class = "quarto-xref" }))
      out:extend(citation.suffix)
    end
  end
  return out
end

-- An image labelled as a figure but not alone in its paragraph is no figure: refuse it
-- rather than show it unnumbered (pandoc moves a real figure's label to the Figure).
local function inline_figure(image)
  if image.identifier:match("^fig%-") then
    error("CROSSREF: the image {#" .. image.identifier .. "} (" .. image.src .. ") is not a figure: a figure "
      .. "image needs a caption and must be alone in its paragraph")
  end
end

function Pandoc(doc)
  doc:walk({ Image = inline_figure })
  number_sections(doc.blocks, {}, false, doc.meta["number-sections"] == true)
  doc = doc:walk({
    Figure = function(el) return number_float("fig", el) end,
    Table = function(el) return number_float("tbl", el) end,
  })
  doc = doc:walk({ Div = function(div) return callout(div) or typst_block(div) end })
  doc = doc:walk({ Cite = reference })
  if #unknown > 0 then
    error("CROSSREF: unknown cross-reference" .. (#unknown == 1 and "" or "s") .. ": " .. table.concat(unknown, "; "))
  end
  return doc
end
