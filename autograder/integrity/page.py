def integrity_csv(pairs, threshold): return ""
def integrity_html(result, assignment): return ""
