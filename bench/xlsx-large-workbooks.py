#!/usr/bin/python3
"""
Large real-writer workbooks for choosing the XLSX zip-bomb guard's limits (bench/xlsx-readers.md,
"Real workbooks with a large sheet"). Not fixtures: they are tens of MB and go to bench/data/.

    apt-get install python3-xlsxwriter libreoffice-calc-nogui
    /usr/bin/python3 bench/xlsx-large-workbooks.py            # writes bench/data/xlsx-large/
    unzip -v bench/data/xlsx-large/roster-165000.xlsx          # sizes and ratios of the parts
    npx tsx bench/xlsx-readers.ts --child rostersync "$PWD/bench/data/xlsx-large/roster-165000.xlsx"
"""
import datetime
import os
import random
import subprocess

import xlsxwriter

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data', 'xlsx-large')
FIRST = ['Marie', 'Niels', 'Ada', 'Alan', 'Grace', 'Emmy', 'Lise', 'Dorothy', 'Chien-Shiung', 'Srinivasa']
LAST = ['Curie', 'Bohr', 'Lovelace', 'Turing', 'Hopper', 'Noether', 'Meitner', 'Hodgkin', 'Wu', 'Ramanujan']
CITIES = ['Paris', 'Copenhagen', 'London', 'Cambridge', 'Yale', 'Göttingen', 'Berlin', 'Oxford', 'Princeton', 'Madras']


def roster(path, rows):
    """A roster sheet as a person would keep it: unique names and emails, repeated institutions."""
    random.seed(7)
    wb = xlsxwriter.Workbook(path)
    ws = wb.add_worksheet('Roster')
    date = wb.add_format({'num_format': 'yyyy-mm-dd'})
    ws.write_row(0, 0, ['Name', 'Email', 'Institution', 'Country', 'Reviews', 'Score', 'Active', 'Joined'])
    for r in range(1, rows + 1):
        first, last = random.choice(FIRST), random.choice(LAST)
        ws.write_row(r, 0, ['%s %s %d' % (first, last, r), '%s.%s%d@example.org' % (first.lower(), last.lower(), r),
                            'University of %s' % random.choice(CITIES), random.choice(['FR', 'DK', 'GB', 'US', 'DE', 'IN']),
                            random.randint(0, 40), round(random.random() * 5, 2), random.random() > 0.5])
        ws.write_datetime(r, 7, datetime.datetime(2000, 1, 1) + datetime.timedelta(days=random.randint(0, 9000)), date)
    wb.close()


def formatted_blanks(path, rows):
    """A sheet of formatted empty cells (a coloured range), the most repetitive XML Excel writes."""
    wb = xlsxwriter.Workbook(path)
    ws = wb.add_worksheet('Log')
    fill = wb.add_format({'bg_color': '#FFFF00'})
    for r in range(rows):
        for c in range(30):
            ws.write_blank(r, c, None, fill)
        ws.write_number(r, 30, r)
    wb.add_worksheet('Roster').write_row(0, 0, ['Name'])
    wb.close()


def main():
    os.makedirs(OUT, exist_ok=True)
    roster(os.path.join(OUT, 'roster-165000.xlsx'), 165000)
    roster(os.path.join(OUT, 'roster-400000.xlsx'), 400000)
    formatted_blanks(os.path.join(OUT, 'blanks-60000.xlsx'), 60000)
    os.makedirs(os.path.join(OUT, 'libreoffice'), exist_ok=True)
    subprocess.run(['soffice', '--headless', '--norestore', '--convert-to', 'xlsx', '--outdir',
                    os.path.join(OUT, 'libreoffice'), os.path.join(OUT, 'roster-165000.xlsx')], check=True)


if __name__ == '__main__':
    main()
