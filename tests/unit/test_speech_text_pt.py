"""Normalização de texto para fala em português do Brasil: forma escrita -> palavras lidas."""

from __future__ import annotations

import pytest

from appliance.tts import speakable

CASES: dict[str, list[tuple[str, str]]] = {
    "inteiros e decimais": [
        ("0", "zero"),
        ("7", "sete"),
        ("21", "vinte e um"),
        ("100", "cem"),
        ("101", "cento e um"),
        ("1,5", "um vírgula cinco"),
        ("2,5", "dois vírgula cinco"),
        ("1,25", "um vírgula vinte e cinco"),
        ("0,05", "zero vírgula zero cinco"),
        ("2,50", "dois vírgula cinco"),
        ("1.5", "um vírgula cinco"),
        ("-4", "menos quatro"),
    ],
    "separador de milhar": [
        ("1.000", "mil"),
        ("2.000", "dois mil"),
        ("1.500", "mil e quinhentos"),
        ("10.000", "dez mil"),
        ("1.000.000", "um milhão"),
        ("2.500.000", "dois milhões e quinhentos mil"),
        ("1.234,5", "mil duzentos e trinta e quatro vírgula cinco"),
        ("1000", "mil"),
    ],
    "porcentagem": [
        ("50%", "cinquenta por cento"),
        ("50 %", "cinquenta por cento"),
        ("2,5%", "dois vírgula cinco por cento"),
        ("1%", "um por cento"),
    ],
    "dinheiro": [
        ("R$ 12,50", "doze reais e cinquenta centavos"),
        ("R$12,50", "doze reais e cinquenta centavos"),
        ("R$ 1,00", "um real"),
        ("R$ 1", "um real"),
        ("R$ 2", "dois reais"),
        ("R$ 0,50", "cinquenta centavos"),
        ("R$ 0,01", "um centavo"),
        ("R$ 1,01", "um real e um centavo"),
        ("R$ 1.234,56", "mil duzentos e trinta e quatro reais e cinquenta e seis centavos"),
        ("R$ 1.000.000", "um milhão de reais"),
        ("R$ 2.000.000,50", "dois milhões de reais e cinquenta centavos"),
        ("R$ 5 mil", "cinco mil reais"),
        ("R$ 1,5 milhão", "um vírgula cinco milhão de reais"),
        ("R$ 2,5 milhões", "dois vírgula cinco milhões de reais"),
        ("US$ 2", "dois dólares"),
        ("$ 1", "um dólar"),
        ("€ 3,10", "três euros e dez centavos"),
        ("3,10 €", "três euros e dez centavos"),
        ("£ 2", "duas libras"),
        ("£ 1", "uma libra"),
        ("Custa R$ 3.", "Custa três reais."),
    ],
    "datas": [
        ("2026-12-01", "primeiro de dezembro"),
        ("2026-12-02", "dois de dezembro"),
        ("2026-03-21", "vinte e um de março"),
        ("2026-12-02 15:30", "dois de dezembro às quinze e trinta"),
        ("2026-12-01T15:00:00-03:00", "primeiro de dezembro às quinze horas"),
        ("2026-12-01 01:00", "primeiro de dezembro à uma hora"),
        ("2026-12-01 00:00", "primeiro de dezembro à meia-noite"),
        ("1 de dezembro", "primeiro de dezembro"),
        ("1º de maio", "primeiro de maio"),
        ("1° de maio", "primeiro de maio"),
        ("01 de janeiro", "primeiro de janeiro"),
        ("2 de março", "dois de março"),
        ("1 de dezembro de 2026", "primeiro de dezembro de dois mil e vinte e seis"),
        ("01/12/2026", "primeiro de dezembro de dois mil e vinte e seis"),
        ("25/12/26", "vinte e cinco de dezembro de dois mil e vinte e seis"),
        ("seg., 1 de dezembro", "segunda-feira, primeiro de dezembro"),
        ("sáb, 2026-12-05", "sábado, cinco de dezembro"),
        ("vou ter 2 filhos", "vou ter dois filhos"),
    ],
    "horas": [
        ("15:00", "quinze horas"),
        ("15:30", "quinze e trinta"),
        ("15:05", "quinze e cinco"),
        ("1:00", "uma hora"),
        ("02:00", "duas horas"),
        ("21:00", "vinte e uma horas"),
        ("22:15", "vinte e duas e quinze"),
        ("00:00", "meia-noite"),
        ("00:15", "meia-noite e quinze"),
        ("12:00", "doze horas"),
        ("15h", "quinze horas"),
        ("15h30", "quinze e trinta"),
        ("15:30h", "quinze e trinta"),
        ("às 9h", "às nove horas"),
        ("às 3 pm", "às quinze horas"),
        ("24h", "vinte e quatro horas"),
    ],
    "ordinais": [
        ("1º", "primeiro"),
        ("2º", "segundo"),
        ("1ª", "primeira"),
        ("2ª", "segunda"),
        ("3ª vez", "terceira vez"),
        ("21ª", "vigésima primeira"),
        ("10º andar", "décimo andar"),
        ("1.º", "primeiro"),
    ],
    "unidades": [
        ("1 l", "um litro"),
        ("2 l", "dois litros"),
        ("2,5 l", "dois vírgula cinco litros"),
        ("1,5 l", "um vírgula cinco litros"),
        ("1 kg", "um quilo"),
        ("2 kg", "dois quilos"),
        ("2kg", "dois quilos"),
        ("500 g", "quinhentos gramas"),
        ("2 g", "dois gramas"),
        ("300 ml", "trezentos mililitros"),
        ("1 lb", "uma libra"),
        ("2 lb", "duas libras"),
        ("5 km", "cinco quilômetros"),
        ("25 °C", "vinte e cinco graus Celsius"),
        ("25ºC", "vinte e cinco graus Celsius"),
        ("1 °C", "um grau Celsius"),
        ("-3 °C", "menos três graus Celsius"),
        ("0,5 kg", "meio quilo"),
        ("0,5 l", "meio litro"),
        ("0,25 kg", "um quarto de quilo"),
        ("0,75 quilo de presunto", "três quartos de quilo de presunto"),
        ("2 quilos de arroz", "dois quilos de arroz"),
        ("0,5 quilo", "meio quilo"),
        ("1 dúzia", "uma dúzia"),
        ("2 dúzias", "duas dúzias"),
        ("2 dúzia", "duas dúzias"),
        ("2 duzias", "duas dúzias"),
        ("0,5 dúzia", "meia dúzia"),
        ("22 dúzias", "vinte e duas dúzias"),
        ("2 pacotes", "dois pacotes"),
        ("1 pct", "um pacote"),
        ("2 un", "duas unidades"),
        ("1 un", "uma unidade"),
        ("3 cx", "três caixas"),
        ("2 h", "duas horas"),
        ("30 min", "trinta minutos"),
        ("2-3 kg", "dois a três quilos"),
        ("2-3 dúzias", "duas a três dúzias"),
    ],
    "medida de alguma coisa": [
        ("2 l leite", "dois litros de leite"),
        ("2 l de leite", "dois litros de leite"),
        ("1 kg arroz", "um quilo de arroz"),
        ("1 dúzia ovos", "uma dúzia de ovos"),
        ("2 dúzias de ovos", "duas dúzias de ovos"),
        ("1 pct café", "um pacote de café"),
        ("2 kg para a lista", "dois quilos para a lista"),
    ],
    "gênero do que se conta": [
        ("1 garrafa", "uma garrafa"),
        ("2 garrafas de vinho", "duas garrafas de vinho"),
        ("2 maçãs", "duas maçãs"),
        ("22 bananas", "vinte e duas bananas"),
        ("200 pessoas", "duzentas pessoas"),
        ("2.000 pessoas", "duas mil pessoas"),
        ("1.000.000 pessoas", "um milhão de pessoas"),
        ("2 vezes", "duas vezes"),
        ("2 cebolas", "duas cebolas"),
        ("2 alfaces", "duas alfaces"),
        ("2 pães", "dois pães"),
        ("2 dias", "dois dias"),
        ("2 ovos", "dois ovos"),
        ("2 iogurtes", "dois iogurtes"),
        ("2 latas", "duas latas"),
        ("2 a 3 garrafas", "duas a três garrafas"),
        ("2 de março", "dois de março"),
        ("às 2 da tarde", "às duas da tarde"),
        ("das 2 às 4", "das duas às quatro"),
        ("à 1 da manhã", "à uma da manhã"),
    ],
    "abreviações e símbolos": [
        ("Sr. Silva", "Senhor Silva"),
        ("Sra. Souza", "Senhora Souza"),
        ("Dra. Lima", "Doutora Lima"),
        ("Dr. Lima", "Doutor Lima"),
        ("Av. Paulista", "Avenida Paulista"),
        ("nº 5", "número cinco"),
        ("n° 5", "número cinco"),
        ("#5", "número cinco"),
        ("leite, ovos etc.", "leite, ovos etcétera"),
        ("café c/ leite", "café com leite"),
        ("arroz & feijão", "arroz e feijão"),
        ("aprox. 3", "aproximadamente três"),
    ],
}


@pytest.mark.parametrize(
    ("written", "spoken"),
    [case for cases in CASES.values() for case in cases],
    ids=[f"{feature}: {w}" for feature, cases in CASES.items() for w, _ in cases],
)
def test_portuguese(written: str, spoken: str) -> None:
    assert speakable(written, "pt") == spoken


@pytest.mark.parametrize("tag", ["pt", "pt-BR", "pt_BR", "PT-br"])
def test_language_tags_are_accepted(tag: str) -> None:
    assert speakable("2 garrafas", tag) == "duas garrafas"


def test_a_whole_receipt_sentence() -> None:
    written = "Adicionei 2 l de leite, 1 dúzia de ovos e 2 garrafas de vinho (R$ 45,90)."
    assert speakable(written, "pt") == (
        "Adicionei dois litros de leite, uma dúzia de ovos e duas garrafas de vinho "
        "(quarenta e cinco reais e noventa centavos)."
    )


def test_an_agenda_sentence() -> None:
    written = "Dentista marcado para 2026-12-01 às 15:00."
    assert speakable(written, "pt") == "Dentista marcado para primeiro de dezembro às quinze horas."
