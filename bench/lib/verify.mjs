// Checks one router's answer for one case: the expected route (by index) and the expected
// params, compared as strings (fw returns an int param as a number).

const show = (value) => JSON.stringify(value)

function sameParams(got, expected) {
  const gotKeys = Object.keys(got ?? {})
  const expectedKeys = Object.keys(expected)
  if (gotKeys.length !== expectedKeys.length) return false
  return expectedKeys.every((k) => got[k] !== undefined && String(got[k]) === expected[k])
}

// Returns null when the answer is right, else a short description of what came back.
export function checkAnswer(answer, c) {
  if (c.routeIndex < 0) return answer === null ? null : `expected a miss, got ${show(answer)}`
  if (answer === null) return 'no match'
  if (answer.index !== c.routeIndex) return `matched route #${answer.index}, not #${c.routeIndex}`
  if (!sameParams(answer.params, c.params)) {
    return `params ${show(answer.params)}, expected ${show(c.params)}`
  }
  return null
}
